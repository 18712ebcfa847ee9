"""Every fenced block of a hand-written documentation page says whether it runs (tests/docs_examples.py):
an unmarked block would be skipped silently by the examples' test."""

from __future__ import annotations

from pathlib import Path

from tests.docs_examples import README, blocks, chains, hand_written_pages, unmarked_blocks


def test_every_block_of_a_hand_written_page_and_the_readme_is_marked_example_or_illustration() -> None:
    assert unmarked_blocks([*hand_written_pages(), README]) == []


def test_the_marks_are_read_with_their_chain_file_and_expectation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- example: first file=provider.py -->\n```python\nprint(1)\n```\n\n"
        '<!-- example: first expect="ok" -->\n```sh\necho ok\n```\n\n'
        "<!-- illustration -->\n```json\n{}\n```\n\n```sh\nrm -rf /\n```\n"
    )
    found = blocks(page)
    assert [(b.mark, b.chain, b.file, b.expect, b.lang) for b in found] == [
        ("example", "first", "provider.py", None, "python"),
        ("example", "first", None, "ok", "sh"),
        ("illustration", "", None, None, "json"),
        (None, "", None, None, "sh"),
    ]
    assert [b.line for b in chains([page])["first"]] == [2, 7]
    assert unmarked_blocks([page]) == [f"{page}:16"]
