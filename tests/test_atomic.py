"""minibert.atomic: a failed write leaves the old file; a good one replaces it whole."""

import pytest

from minibert.atomic import atomic_path, write_text_atomically


def test_a_good_write_replaces_the_file(tmp_path):
    target = tmp_path / "sub" / "vocab.txt"
    write_text_atomically(target, "old\n")
    write_text_atomically(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in target.parent.iterdir()] == ["vocab.txt"]     # no temporary left


def test_a_failed_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "vocab.txt"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomically(target, "\ud83d")                    # a lone surrogate
    assert target.read_text() == "old\n"
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["vocab.txt"]
