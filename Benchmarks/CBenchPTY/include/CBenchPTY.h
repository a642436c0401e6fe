#ifndef SAVEDESK_CBENCHPTY_H
#define SAVEDESK_CBENCHPTY_H
// A pseudo-terminal for the terminal-UI benchmark: ptsname and ioctl(TIOCSWINSZ) do not import
// into Swift (feature macros; a variadic function).

/// Opens a pty of `rows`×`cols`; returns the master fd (or -1) and writes the slave's path.
int savedesk_bench_openpty(int rows, int cols, char *slave_path, int path_size);
/// The posix_spawn flag that starts the child in a new session.
short savedesk_bench_spawn_setsid(void);
#endif
