"""The plan checklist panel: marks, progress count, the Verification item, sanitising, height."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from planshell.ui.widgets.checklist import ChecklistBody, ChecklistPanel, normalise_items
from tests.ui.samples import ITEMS


class ChecklistHost(App[None]):
    def __init__(self, items: list[tuple[str, str]] | None = None, width: int = 50) -> None:
        super().__init__()
        self.items = items
        self.panel_width = width
        from planshell.ui.themes import load_themes

        for theme in load_themes().themes:
            self.register_theme(theme)
        self.theme = "planshell-dark"

    def compose(self) -> ComposeResult:
        yield Static("transcript", id="transcript")
        panel = ChecklistPanel(self.items or ())
        panel.styles.width = self.panel_width
        yield panel


def rows(app: App[None]) -> list[str]:
    body = app.query_one(ChecklistBody)
    return [line.plain.rstrip() for line in body.lines(body.content_region.width)[0]]


def header(app: App[None]) -> str:
    return str(app.query_one("#checklist-header", Static).render())


async def test_update_renders_marks_and_progress() -> None:
    app = ChecklistHost()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(ChecklistPanel)
        assert header(app) == "Plan progress 0/0"
        panel.update_items(ITEMS)
        await pilot.pause()
        assert header(app) == "Plan progress 1/5"
        assert (panel.done, panel.total) == (1, 5)
        shown = rows(app)
        assert shown[0] == "☑ Read the callers of handle_request"
        assert shown[1] == "◐ Add a token-bucket limiter"
        assert shown[2] == "☐ Wire it into handle_request"
        assert shown[3] == "☐ Write tests"
        assert set(shown[4]) == {"┄"}  # the Verification item is set apart
        assert shown[5] == "☐ Verification: pytest -q"
        rendered = [panel.query_one(ChecklistBody).render_line(y).text.rstrip() for y in range(6)]
        assert rendered == shown
        panel.update_items([(c, "completed") for c, _ in ITEMS])
        await pilot.pause()
        assert header(app) == "Plan progress 5/5"
        assert all(row.startswith(("☑", "┄")) for row in rows(app))


async def test_completed_items_are_struck_through_and_in_progress_is_bold() -> None:
    app = ChecklistHost(ITEMS)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        body = app.query_one(ChecklistBody)
        lines, active = body.lines(body.content_region.width)
        assert active == 1
        done_text = lines[0]
        assert any(span.style and getattr(span.style, "strike", False) for span in done_text.spans)
        assert any(span.style and getattr(span.style, "bold", False) for span in lines[1].spans)


async def test_verification_is_set_apart_only_when_it_is_last() -> None:
    items = [("Verification: first", "pending"), ("Step", "pending")]
    app = ChecklistHost(items)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not any("┄" in row for row in rows(app))
        app.query_one(ChecklistPanel).update_items([("Verification: only", "pending")])
        await pilot.pause()
        assert rows(app) == ["☐ Verification: only"]


async def test_text_is_sanitised_and_statuses_normalised() -> None:
    evil = [
        ("Step \x1b]52;c;SGVsbG8=\x07one \x1b[31mred\x1b[0m\nnext line", "completed"),
        ("\u202eReversed \x9b2J", "bogus"),
    ]
    assert normalise_items(evil) == (
        ("Step one red next line", "completed"),
        ("Reversed", "pending"),
    )
    app = ChecklistHost(evil)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        joined = "\n".join(rows(app))
        assert "\x1b" not in joined and "\u202e" not in joined and "\x9b" not in joined
        assert rows(app) == ["☑ Step one red next line", "☐ Reversed"]
        panel = app.query_one(ChecklistPanel)
        assert panel.items == normalise_items(evil)


async def test_long_items_wrap_with_a_hanging_indent() -> None:
    long = "Add a token-bucket rate limiter in src/app/limits.py with a configurable burst"
    app = ChecklistHost([(long, "in_progress")], width=30)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        shown = rows(app)
        assert len(shown) > 1 and shown[0].startswith("◐ ")
        assert all(row.startswith("  ") for row in shown[1:])
        assert " ".join(row[2:].strip() for row in shown) == long


async def test_height_is_bounded_and_the_item_in_progress_is_scrolled_into_view() -> None:
    items = [(f"Step {n}", "completed") for n in range(30)]
    items[25] = ("Step 25", "in_progress")
    items.append(("Verification: make test", "pending"))
    app = ChecklistHost(items)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        await pilot.pause()
        panel = app.query_one(ChecklistPanel)
        assert panel.size.height <= 12
        scroll = panel.query_one("#checklist-scroll")
        assert scroll.scroll_y > 0
        top = round(scroll.scroll_y)
        assert top <= 25 < top + scroll.size.height
        assert header(app) == "Plan progress 29/31"


async def test_display_toggle_and_empty_state() -> None:
    app = ChecklistHost([])
    async with app.run_test(size=(60, 20)) as pilot:
        panel = app.query_one(ChecklistPanel)
        body = panel.query_one(ChecklistBody)
        assert "No steps yet." in body.render_line(0).text
        panel.display = False
        await pilot.pause()
        panel.update_items(ITEMS)  # updates while hidden are kept
        panel.display = True
        await pilot.pause()
        assert header(app) == "Plan progress 1/5"
        assert rows(app)[0].startswith("☑")


async def test_updates_before_mount_are_shown() -> None:
    panel = ChecklistPanel()
    panel.update_items(ITEMS[:2])

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield panel

    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert header(app) == "Plan progress 1/2"
        assert rows(app) == ["☑ Read the callers of handle_request", "◐ Add a token-bucket limiter"]


async def test_a_step_ticked_without_evidence_shows_a_warning_mark() -> None:
    """The engine's ``unverified`` and ``skipped`` statuses: closed steps, marked apart."""
    items = [
        ("Read the callers", "completed"),
        ("Add a token bucket", "unverified"),
        ("Test it (skipped: no runner)", "skipped"),
        ("Verification: pytest -q", "pending"),
    ]
    app = ChecklistHost(items)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert header(app) == "Plan progress 3/4"
        shown = rows(app)
        assert shown[0] == "☑ Read the callers"
        assert shown[1] == "⚠ Add a token bucket"
        assert shown[2] == "⊘ Test it (skipped: no runner)"
        painted = app.query_one(ChecklistBody).render_line(1).text.rstrip()
        assert painted == "⚠ Add a token bucket"
