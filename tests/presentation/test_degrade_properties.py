"""Property: adapt never drops text silently, whatever the message and the limits."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given
from hypothesis import strategies as st

from chatgate.model.outbound import (
    Block,
    Button,
    Buttons,
    Chart,
    Context,
    Divider,
    Image,
    OutboundMessage,
    Select,
    SelectOption,
    Series,
    Table,
    Text,
)
from chatgate.model.reasons import DegradeReason as R
from chatgate.presentation.degrade import DegradedDelivery, adapt
from chatgate.presentation.limits import PresentationLimits
from chatgate.presentation.markdown import markdown_to_plain
from chatgate.presentation.render import to_markdown

_letters = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
_MARKUP = ["{}", "**{}**", "_{}_", "`{}`", "# {}", "[{}](https://l.io/x)", "~~{}~~"]


@dataclass
class _Expect:
    """Unique visible strings of a generated message, each with the reason allowed to drop it."""

    strings: list[tuple[str, R | None]] = field(default_factory=list)

    def word(self, draw: st.DrawFn, may_drop: R | None = None) -> str:
        # "w<n>x" makes every string unique and never a substring of another one
        word = f"w{len(self.strings)}x{draw(_letters)}"
        self.strings.append((word, may_drop))
        return word


@st.composite
def _case(draw: st.DrawFn) -> tuple[OutboundMessage, PresentationLimits, _Expect]:
    limits = PresentationLimits(
        supports_markdown=draw(st.booleans()),
        supports_buttons=draw(st.booleans()),
        supports_select=draw(st.booleans()),
        supports_tables=draw(st.booleans()),
        supports_charts=draw(st.booleans()),
        supports_images=draw(st.booleans()),
        max_buttons=draw(st.integers(1, 4)),
        max_options=draw(st.integers(1, 4)),
        callback_data_max_bytes=draw(st.none() | st.integers(18, 30)),
        max_table_rows=draw(st.integers(1, 3)),
        max_table_cols=draw(st.integers(1, 3)),
    )
    expect = _Expect()
    blocks: list[Block] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(
            st.sampled_from(["text", "buttons", "select", "table", "chart", "image", "misc"])
        )
        if kind == "text":
            template = draw(st.sampled_from(_MARKUP))
            blocks.append(Text(template.format(expect.word(draw)), draw(st.booleans())))
        elif kind == "buttons":
            buttons = []
            for i in range(draw(st.integers(0, 6))):
                capped = limits.supports_buttons and i >= limits.max_buttons
                drop = R.BUTTONS_TRUNCATED if capped else None
                label = expect.word(draw, drop)
                url = f"https://u.io/{expect.word(draw, drop)}" if draw(st.booleans()) else None
                value = draw(st.none() | st.text(max_size=40))
                buttons.append(Button(label, value, url))
            blocks.append(Buttons(tuple(buttons)))
        elif kind == "select":
            cap = limits.max_options if limits.supports_select else limits.max_buttons
            capped_at = cap if limits.supports_select or limits.supports_buttons else 99
            options = tuple(
                SelectOption(
                    expect.word(draw, R.OPTIONS_TRUNCATED if i >= capped_at else None),
                    f"{i}:{draw(st.text(max_size=40))}",  # distinct: repeats are a table case
                )
                for i in range(draw(st.integers(0, 6)))
            )
            blocks.append(Select(options, expect.word(draw) if draw(st.booleans()) else "Choose…"))
        elif kind == "table":
            n_cols, n_rows = draw(st.integers(0, 4)), draw(st.integers(0, 4))
            columns = tuple(
                expect.word(draw, R.TABLE_TRUNCATED if c >= limits.max_table_cols else None)
                for c in range(n_cols)
            )
            rows = []
            for r in range(n_rows):
                width = draw(st.integers(0, 4))
                rows.append(
                    tuple(
                        expect.word(
                            draw,
                            R.TABLE_TRUNCATED
                            if r >= limits.max_table_rows or c >= limits.max_table_cols
                            else None,
                        )
                        for c in range(width)
                    )
                )
            blocks.append(Table(columns, tuple(rows)))
        elif kind == "chart":
            series = tuple(
                Series(expect.word(draw), (1.0, 2.5)) for _ in range(draw(st.integers(0, 2)))
            )
            caption = expect.word(draw) if draw(st.booleans()) else ""
            blocks.append(Chart(draw(st.sampled_from(["bar", "line", ""])), series, caption))
        elif kind == "image":
            alt = expect.word(draw) if draw(st.booleans()) else ""
            blocks.append(Image(f"https://i.io/{expect.word(draw)}.png", alt))
        else:
            blocks.append(Context(expect.word(draw)) if draw(st.booleans()) else Divider())
    return OutboundMessage(tuple(blocks)), limits, expect


def _visible(message: OutboundMessage, report: DegradedDelivery | None) -> str:
    return to_markdown(message) + "\n" + (report.note if report else "")


@given(_case())
def test_no_text_is_dropped_silently(
    case: tuple[OutboundMessage, PresentationLimits, _Expect],
) -> None:
    message, limits, expect = case
    adapted, report = adapt(message, limits)
    visible = _visible(adapted, report)
    reasons = set(report.reasons) if report else set()
    for word, may_drop in expect.strings:
        if may_drop is not None and may_drop in reasons:
            continue
        assert word in visible, (word, visible)
    if report is not None:
        assert report.note.startswith("(Note: ") and all(d in report.note for d in report.dropped)


@given(_case())
def test_adapted_message_fits_the_limits_and_is_stable(
    case: tuple[OutboundMessage, PresentationLimits, _Expect],
) -> None:
    message, limits, _ = case
    adapted, report = adapt(message, limits)
    again, second_report = adapt(adapted, limits)
    assert again is adapted and second_report is None
    reasons = set(report.reasons) if report else set()
    cap = limits.callback_data_max_bytes
    for block in adapted.blocks:
        assert not isinstance(block, Buttons) or (
            limits.supports_buttons and 0 < len(block.buttons) <= limits.max_buttons
        )
        assert not isinstance(block, Select) or (
            limits.supports_select and 0 < len(block.options) <= limits.max_options
        )
        assert not isinstance(block, Table) or limits.supports_tables
        assert not isinstance(block, Chart) or limits.supports_charts
        assert not isinstance(block, Image) or limits.supports_images
        assert not (isinstance(block, Text) and block.markdown and not limits.supports_markdown)
        values = [b.value for b in block.buttons] if isinstance(block, Buttons) else []
        values += [o.value for o in block.options] if isinstance(block, Select) else []
        for value in values:
            if cap is not None and value is not None:
                assert len(value.encode()) <= cap
                assert not value.startswith("h:") or R.CALLBACK_DATA_TOO_LONG in reasons
    if report is None and not limits.supports_markdown:
        texts = [b for b in message.blocks if isinstance(b, Text) and b.markdown]
        assert all(markdown_to_plain(t.text) == t.text for t in texts)
