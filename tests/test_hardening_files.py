"""Saved files survive a failed save, and bad tokenizer files and ids are refused by name."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from minibert.course import notebooks, plots
from minibert.pretrained import encode_batch
from minibert.tokenizers import ByteLevelBPE, WordPiece, WordTokenizer

SURROGATE = json.loads('"\\ud83d"')   # half of a UTF-16 pair, as a JSON file may hold
TEXTS = ["the cat sat on the mat.", "the dog sat on the log!", "a cat and a dog."]


@pytest.fixture(scope="module")
def tokenizers():
    return {"word": WordTokenizer.train(TEXTS, vocab_size=20),
            "wordpiece": WordPiece.train(TEXTS, vocab_size=60),
            "bpe": ByteLevelBPE.train(" ".join(TEXTS), vocab_size=280)}


def test_a_lone_surrogate_is_refused_before_any_file_is_touched(tmp_path, tokenizers):
    with pytest.raises(ValueError, match="lone surrogate"):
        WordTokenizer.train([["cat", SURROGATE]], vocab_size=10)
    with pytest.raises(ValueError, match="lone surrogate"):
        WordPiece([*tokenizers["wordpiece"].id_to_token, "x" + SURROGATE])
    for kind in ("word", "wordpiece"):
        tok = tokenizers[kind]
        path = tmp_path / f"{kind}.vocab"
        tok.save(path)
        before = path.read_bytes()
        tok.id_to_token.append(SURROGATE)    # slipped past the constructor by hand
        try:
            with pytest.raises(ValueError, match=f"cannot save .*{kind}.vocab.*lone surrogate"):
                tok.save(path)
        finally:
            tok.id_to_token.pop()
        assert path.read_bytes() == before, f"{kind}: a failed save changed the old file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["word.vocab", "wordpiece.vocab"]


@pytest.mark.parametrize("kind", ["word", "wordpiece", "bpe"])
def test_decode_takes_integer_ids_only(tokenizers, kind):
    tok = tokenizers[kind]
    ids = [tok.cls_id, tok.sep_id]
    assert tok.decode(ids) == tok.decode(torch.tensor(ids))   # ints and int tensors
    for bad in ([2.7], ["2"], torch.tensor([2.0])):
        with pytest.raises(ValueError, match="integer ids"):
            tok.decode(bad)


def test_a_count_that_disagrees_with_the_entries_is_refused(tmp_path, tokenizers):
    bpe, wordpiece = tmp_path / "bpe.txt", tmp_path / "wp.txt"
    tokenizers["bpe"].save(bpe)
    tokenizers["wordpiece"].save(wordpiece)
    n = len(tokenizers["bpe"].merges)
    for path, line, count in ((bpe, f"merges {n}", f"merges {n - 2}"),
                              (wordpiece, f"tokens {tokenizers['wordpiece'].vocab_size}",
                               f"tokens {tokenizers['wordpiece'].vocab_size - 2}")):
        path.write_text(path.read_text(encoding="utf-8").replace(line, count, 1),
                        encoding="utf-8")
    with pytest.raises(ValueError, match=r"bpe.txt promises .*the count was edited"):
        ByteLevelBPE.load(bpe)
    with pytest.raises(ValueError, match=r"wp.txt promises .*the count was edited.*save"):
        WordPiece.load(wordpiece)


def test_a_bpe_file_cut_mid_character_says_truncated(tmp_path):
    tok = ByteLevelBPE.train("héhéhé ééé é é", vocab_size=262)
    path = tmp_path / "bpe.txt"
    tok.save(path)
    data = path.read_bytes().rstrip(b"\n")
    assert data[-1] >= 0x80                       # the last character is é, two bytes
    path.write_bytes(data[:-1])
    with pytest.raises(ValueError, match="bpe.txt is truncated"):
        ByteLevelBPE.load(path)


@pytest.mark.parametrize("text, says", [
    ('{"format": "minibert-word-tok', "is not a word-tokenizer file"),
    ('{"format": "minibert-word-tokenizer", "version": 1, "lowercase": true}',
     "lacks its 'tokens'"),
])
def test_word_tokenizer_load_names_the_file(tmp_path, text, says):
    path = tmp_path / "vocab.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"vocab.json.*{says}"):
        WordTokenizer.load(path)


def test_encode_batch_refuses_a_max_len_without_room_for_the_specials(tokenizers):
    tok = tokenizers["wordpiece"]
    assert encode_batch(tok, ["the cat sat"], max_len=2)["input_ids"].shape == (1, 2)
    for bad in (1, 0, 2.5):
        with pytest.raises(ValueError, match="max_len must be an int of at least 2"):
            encode_batch(tok, ["the cat sat"], max_len=bad)


def test_bpe_and_wordpiece_share_the_default_of_allowed_special(tokenizers):
    for kind in ("wordpiece", "bpe"):
        tok = tokenizers[kind]
        assert tok.mask_id not in tok.encode("the [MASK] sat")
        assert tok.mask_id in tok.encode("the [MASK] sat", allowed_special="all")


def test_a_figure_that_fails_to_save_leaves_the_old_one(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = plots.save_figure(fig, "curve", directory=tmp_path)
    before = path.read_bytes()
    real_savefig = fig.savefig

    def savefig_then_fail(target, **kwargs):   # a full disk, Ctrl-C: half a file, then an error
        Path(target).write_bytes(b"\x89PNG half")
        raise OSError("No space left on device")

    fig.savefig = savefig_then_fail
    with pytest.raises(OSError, match="No space"):
        plots.save_figure(fig, "curve", directory=tmp_path)
    fig.savefig = real_savefig
    plt.close(fig)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["curve.png"]


def test_a_garbled_timings_file_is_named_and_rewritten(tmp_path, capsys):
    timings = tmp_path / "timings.json"
    timings.write_text('{"01_bert": 12.5, "02_tok')
    with pytest.raises(ValueError, match="timings.json is unreadable.*delete it"):
        notebooks.read_timings(timings)
    notebooks._update_timings(timings, {"03_roberta": 1.04})
    assert "starting it afresh" in capsys.readouterr().err
    assert json.loads(timings.read_text()) == {"03_roberta": 1.0}


def test_the_course_map_on_a_truncated_timings_file_names_the_fix(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "timings.json").write_text('{"01_bert": 1')
    env = {**os.environ, "MINIBERT_HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "minibert"], capture_output=True, text=True,
                         env=env, cwd=Path(__file__).resolve().parent.parent)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "timings.json is unreadable" in run.stderr and "make lessons" in run.stderr
