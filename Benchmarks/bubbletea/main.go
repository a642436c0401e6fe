// The bench's Bubble Tea (Go) peer of SaveDesk's home screen: the same data from the same server
// (the first page of customers), a search line, the customer list with a selection, a page
// footer. `make bench-tui` builds it offline from Debian's packages (golang-go,
// golang-github-charmbracelet-bubbletea-dev) and runs it in a pseudo-terminal next to
// `savedesk tui`, measured exactly as SaveDesk is.
//
//	customers --server http://127.0.0.1:PORT --key sk_test_...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

type customer struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

type page struct {
	Customers []customer `json:"customers"`
	Total     int        `json:"total"`
}

type loaded struct {
	page page
	err  error
}

type model struct {
	server, key   string
	width, height int
	page          *page
	err           error
	inList        bool
	selected      int
}

func (m model) load() tea.Msg {
	request, err := http.NewRequest("GET", m.server+"/v1/desk/customers?page=1&per_page=20", nil)
	if err != nil {
		return loaded{err: err}
	}
	request.Header.Set("X-ZeroSettle-Key", m.key)
	response, err := (&http.Client{Timeout: 10 * time.Second}).Do(request)
	if err != nil {
		return loaded{err: err}
	}
	defer response.Body.Close()
	var p page
	err = json.NewDecoder(response.Body).Decode(&p)
	return loaded{page: p, err: err}
}

func (m model) Init() tea.Cmd { return m.load }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case loaded:
		if msg.err != nil {
			m.err = msg.err
		} else {
			m.page = &msg.page
		}
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			return m, tea.Quit
		case "down":
			if !m.inList {
				m.inList = true
				m.selected = 0
			} else if m.page != nil && m.selected < len(m.page.Customers)-1 {
				m.selected++
			}
		case "up":
			if m.inList && m.selected > 0 {
				m.selected--
			}
		}
	}
	return m, nil
}

func fit(text string, width int) string {
	runes := []rune(text)
	if len(runes) > width {
		if width <= 1 {
			return string(runes[:width])
		}
		return string(runes[:width-1]) + "…"
	}
	return text + strings.Repeat(" ", width-len(runes))
}

const reverse, plain = "\x1b[7m", "\x1b[0m"

func (m model) View() string {
	width := m.width
	if width <= 0 {
		width = 80
	}
	var lines []string
	lines = append(lines, fit(" SaveDesk › Customers", width))
	lines = append(lines, fit(" Search: id, email or name", width))
	rows := m.height - 3
	if m.page != nil {
		for index, c := range m.page.Customers {
			if index >= rows {
				break
			}
			line := fit(fmt.Sprintf(" %-22s  %-11s  %s", fit(c.Name, 22), c.ID, c.Summary), width)
			if m.inList && index == m.selected {
				line = reverse + line + plain
			}
			lines = append(lines, line)
		}
	} else if m.err != nil {
		lines = append(lines, fit(" "+m.err.Error(), width))
	}
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	footer := ""
	if m.page != nil {
		pages := (m.page.Total + 19) / 20
		if pages < 1 {
			pages = 1
		}
		footer = fmt.Sprintf(" %d customers · page 1 of %d", m.page.Total, pages)
	}
	lines = append(lines, fit(footer, width))
	return strings.Join(lines, "\n")
}

func main() {
	server := flag.String("server", "", "the SaveDesk server")
	key := flag.String("key", "", "a secret key")
	flag.Parse()
	program := tea.NewProgram(model{server: strings.TrimRight(*server, "/"), key: *key}, tea.WithAltScreen())
	if err := program.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
