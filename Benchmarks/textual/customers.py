"""The bench's Textual peer of SaveDesk's home screen: the same data from the same server (the
first page of customers), a search field, the customer list with a selection, a page footer.
`make bench` runs it in a pseudo-terminal next to `savedesk tui` and compares them.

    python customers.py --server http://127.0.0.1:PORT --key sk_test_...
"""

import argparse
import json
import urllib.request

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Input, OptionList, Static


class Customers(App):
    CSS = """
    #header { height: 1; }
    #search { height: 1; border: none; padding: 0; }
    OptionList { border: none; padding: 0; height: 1fr; }
    #footer { height: 1; }
    """
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, server: str, key: str):
        super().__init__()
        self.server = server.rstrip("/")
        self.key = key

    def compose(self) -> ComposeResult:
        yield Static(" SaveDesk \u203a Customers", id="header")
        yield Input(placeholder="id, email or name", id="search")
        yield OptionList(id="list")
        yield Static("", id="footer")

    def on_mount(self) -> None:
        self.run_worker(self.load, thread=True)

    def load(self) -> None:
        request = urllib.request.Request(
            f"{self.server}/v1/desk/customers?page=1&per_page=20", headers={"X-ZeroSettle-Key": self.key}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            page = json.load(response)
        self.call_from_thread(self.show, page)

    def show(self, page: dict) -> None:
        options = self.query_one("#list", OptionList)
        for customer in page["customers"]:
            line = f"{customer['name'][:22]:<22}  {customer['id']:<11}  {customer.get('summary', '')}"
            options.add_option(Text(line, no_wrap=True, overflow="ellipsis"))
        total = page["total"]
        pages = max(1, (total + 19) // 20)
        self.query_one("#footer", Static).update(f"{total} customers \u00b7 page 1 of {pages}")

    def on_key(self, event) -> None:
        # Down from the search field goes to the list, as in SaveDesk.
        if event.key == "down" and self.focused is self.query_one("#search", Input):
            options = self.query_one("#list", OptionList)
            options.focus()
            options.highlighted = 0
            event.stop()
        elif event.key == "q" and self.focused is self.query_one("#search", Input):
            self.exit()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--key", required=True)
    arguments = parser.parse_args()
    Customers(arguments.server, arguments.key).run()
