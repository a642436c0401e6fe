//! The bench's tui-rs peer of SaveDesk's home screen: the same data from the same server (the
//! first page of customers), a search line, the customer list with a selection, a page footer.
//! `make bench-tui` runs it in a pseudo-terminal next to `savedesk tui`, measured exactly as
//! SaveDesk is.
//!
//!     customers --server http://127.0.0.1:PORT --key sk_test_...

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyModifiers};
use crossterm::execute;
use crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use tui::backend::CrosstermBackend;
use tui::layout::{Constraint, Direction, Layout};
use tui::style::{Modifier, Style};
use tui::widgets::{List, ListItem, ListState, Paragraph};
use tui::Terminal;

struct Page {
    rows: Vec<String>,
    total: i64,
}

/// One GET over HTTP/1.0 (so the answer is not chunked), the JSON body parsed.
fn load(server: &str, key: &str) -> Result<Page, String> {
    let address = server.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = TcpStream::connect(address).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    write!(stream, "GET /v1/desk/customers?page=1&per_page=20 HTTP/1.0\r\nHost: {}\r\nX-ZeroSettle-Key: {}\r\n\r\n", address, key)
        .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).map_err(|e| e.to_string())?;
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no body")?;
    let body: serde_json::Value = serde_json::from_slice(&response[split + 4..]).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for customer in body["customers"].as_array().ok_or("no customers")? {
        let name: String = customer["name"].as_str().unwrap_or("").chars().take(22).collect();
        rows.push(format!(
            " {:<22}  {:<11}  {}",
            name,
            customer["id"].as_str().unwrap_or(""),
            customer["summary"].as_str().unwrap_or("")
        ));
    }
    Ok(Page { rows, total: body["total"].as_i64().unwrap_or(0) })
}

fn main() -> io::Result<()> {
    let arguments: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        arguments.iter().position(|a| a == flag).and_then(|i| arguments.get(i + 1)).cloned().unwrap_or_default()
    };
    let (server, key) = (value("--server"), value("--key"));
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let _ = sender.send(load(&server, &key));
    });

    enable_raw_mode()?;
    let mut stdout = io::stdout();
    execute!(stdout, EnterAlternateScreen)?;
    let mut terminal = Terminal::new(CrosstermBackend::new(stdout))?;
    let mut page: Option<Result<Page, String>> = None;
    let mut state = ListState::default();
    loop {
        if page.is_none() {
            if let Ok(loaded) = receiver.try_recv() {
                page = Some(loaded);
            }
        }
        terminal.draw(|frame| {
            let areas = Layout::default()
                .direction(Direction::Vertical)
                .constraints([Constraint::Length(1), Constraint::Length(1), Constraint::Min(0), Constraint::Length(1)])
                .split(frame.size());
            frame.render_widget(Paragraph::new(" SaveDesk › Customers"), areas[0]);
            frame.render_widget(Paragraph::new(" Search: id, email or name"), areas[1]);
            let (items, footer): (Vec<ListItem>, String) = match &page {
                Some(Ok(page)) => (
                    page.rows.iter().map(|row| ListItem::new(row.as_str())).collect(),
                    format!(" {} customers · page 1 of {}", page.total, ((page.total + 19) / 20).max(1)),
                ),
                Some(Err(error)) => (vec![ListItem::new(format!(" {}", error))], String::new()),
                None => (Vec::new(), String::new()),
            };
            let list = List::new(items).highlight_style(Style::default().add_modifier(Modifier::REVERSED));
            frame.render_stateful_widget(list, areas[2], &mut state);
            frame.render_widget(Paragraph::new(footer), areas[3]);
        })?;
        // Wait for a key, or look for the page again while it is loading: every millisecond
        // (crossterm cannot be woken by the loading thread; at 5 ms the page waited up to 5 ms
        // after it had come, most of this app's first frame with data).
        if !event::poll(Duration::from_millis(if page.is_none() { 1 } else { 1_000 }))? {
            continue;
        }
        if let Event::Key(key) = event::read()? {
            let count = match &page {
                Some(Ok(page)) => page.rows.len(),
                _ => 0,
            };
            match key.code {
                KeyCode::Char('q') => break,
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => break,
                KeyCode::Down => match state.selected() {
                    None => state.select(Some(0)),
                    Some(index) if index + 1 < count => state.select(Some(index + 1)),
                    _ => {}
                },
                KeyCode::Up => {
                    if let Some(index) = state.selected() {
                        state.select(Some(index.saturating_sub(1)));
                    }
                }
                _ => {}
            }
        }
    }
    disable_raw_mode()?;
    execute!(terminal.backend_mut(), LeaveAlternateScreen)?;
    Ok(())
}
