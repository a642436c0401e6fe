// The console's main thread: it serves the main dispatch queue, as Foundation's run loop does
// (through the same libdispatch hooks CoreFoundation uses), and waits on the terminal itself, so
// a key wakes the thread that handles it and draws the frame. Read through a dispatch source, a
// key woke libdispatch's event thread first, which then woke the main thread: on an idle virtual
// machine each wake of a sleeping core is tens of microseconds.
#ifdef __linux__
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <sys/eventfd.h>
#include "CTerminalShim.h"

// libdispatch: the main queue's wake-up handle (an eventfd on Linux) and its drain.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

static int running = 0;
static int input_fd = -1;
static void (*input_handler)(void) = NULL;

int savedesk_main_loop_running(void) {
    return running;
}

void savedesk_main_loop_watch(int fd, void (*handler)(void)) {
    input_fd = handler ? fd : -1;
    input_handler = handler;
}

void savedesk_main_loop(void) {
    int queue = _dispatch_get_main_queue_handle_4CF();
    running = 1;
    // Work queued before the handle existed has not signalled it.
    _dispatch_main_queue_callback_4CF(NULL);
    for (;;) {
        struct pollfd fds[2] = {{.fd = queue, .events = POLLIN}, {.fd = input_fd, .events = POLLIN}};
        nfds_t count = input_handler != NULL && input_fd >= 0 ? 2 : 1;
        if (poll(fds, count, -1) < 0) continue;  // EINTR; nothing else is expected on these
        if (count == 2 && fds[1].revents != 0) {
            void (*handler)(void) = input_handler;
            // A terminal that is gone stays readable (end of file) for ever: read it once more, then stop watching.
            if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) savedesk_main_loop_watch(-1, NULL);
            if (handler) handler();
        }
        if (fds[0].revents & POLLIN) {
            eventfd_t value;
            eventfd_read(queue, &value);
            _dispatch_main_queue_callback_4CF(NULL);
        }
    }
}
#endif
