"""ToyLang: a seeded synthetic language whose every regularity is known.

Parts of speech with disjoint vocabularies, template sentences with local word-order
constraints, a topic per document, entity chains and order markers between sentences, and
confusion sets of look-alike words. Because each regularity is planted on purpose, an
experiment can ask whether a model learned exactly that one. `topic_task`,
`acceptability_task`, `continuation_task` and `polarity_task` are its labelled tasks.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "POS_TAGS",
    "ToyDocument",
    "ToyLang",
    "acceptability_task",
    "continuation_task",
    "polarity_task",
    "topic_task",
]

POS_TAGS = ("DET", "ADJ", "NOUN", "VERB", "PREP", "ADV", "MARKER", "NEG", "PUNCT")

# One letter per tag, so a sentence's tags form a string and the grammar is a regular
# expression over it: "the bako tiras a lumo ." -> "DNVDN."
_TAG_LETTER = {"DET": "D", "ADJ": "A", "NOUN": "N", "VERB": "V", "PREP": "P", "ADV": "R",
               "MARKER": "M", "NEG": "X", "PUNCT": "."}
_NP = "D(?:X?A)?N"  # noun phrase: determiner, optional (not) adjective, noun
_PP = "P" + _NP  # prepositional phrase
_GRAMMAR = re.compile(rf"M?{_NP}V(?:{_NP}(?:{_PP})?|R{_PP}|{_PP}|R{_NP})\.")

# Sentence templates, slot by slot. "new" holds the entity a sentence introduces ("a N_k");
# "extra" is an ordinary noun phrase or a reference back to an older entity.
_TEMPLATES = (
    ("subject", "verb", "new"),
    ("subject", "verb", "new", "prep", "extra"),
    ("subject", "verb", "adverb", "prep", "new"),
    ("subject", "verb", "prep", "new"),
    ("subject", "verb", "adverb", "new"),
)

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_STEM_TAILS = ("", "ak", "ir", "un", "el")  # longer stems, used only for big vocabularies
_SUFFIX = {"NOUN": "o", "ADJ": "a", "VERB": "as", "ADV": "e"}  # endings as in Esperanto
_TOPIC_NAMES = ("farm", "sea", "city", "forest", "sky", "market", "mine", "school")


@dataclass
class ToyDocument:
    """A ToyLang document: its sentences (lists of words) and its topic (an int)."""

    sentences: list[list[str]]
    topic: int


class ToyLang:
    """A seeded synthetic language with known structure, for controlled experiments.

    What a student can rely on:

    - Parts of speech with disjoint vocabularies. Function words are English: DET (the, a,
      this, that, some, every, each), PREP (on, in, ...), MARKER (first, then, next, later,
      afterwards, finally), NEG (not) and PUNCT (.). Content words are pronounceable
      pseudo-words whose ending shows the part of speech, as in Esperanto: NOUN -o,
      ADJ -a, VERB -as, ADV -e ("bilo", "kera", "fumas", "dose").
    - Word order: a sentence is `[MARKER] NP VERB (NP [PP] | ADV PP | PP | ADV NP) .` with
      NP = `DET [[not] ADJ] NOUN` and PP = `PREP NP` (see `is_grammatical`).
    - Topics: each document has one; with probability `topic_prob` a noun or verb comes from
      the topic's own words, otherwise from shared words. Words are drawn Zipf-like.
    - Entity chains: sentence 0 introduces "a N_0"; sentence k (k >= 1) starts with
      "the N_{k-1}" and introduces "a N_k", so the next sentence talks about what this one
      introduced. Order markers: "first" only opens sentence 0, "finally" only the last one;
      with `ordered_markers=True` the ones between count up too: sentences 1, 2 and 3 get
      "then", "next" and "later", every sentence after them "afterwards", so the order of
      two sentences can be read off their markers.
    - Sentiment: some adjectives are positive, some negative (`polarity_of`); "not" before
      an adjective negates it.
    - Confusion sets: the content words are partitioned into groups of 3-5 look-alikes that
      differ in one vowel ("bilo", "balo", "bulo"), spread over different topics.

    The language (its words and their roles) is fixed by `seed`; the text sampled from it is
    fixed by the seed given to `documents()` or to a task.
    """

    DETERMINERS = ("the", "a", "this", "that", "some", "every", "each")
    PREPOSITIONS = ("on", "in", "under", "near", "with", "from", "behind", "over")
    MARKERS = ("first", "then", "next", "later", "afterwards", "finally")
    NEGATION = "not"
    PERIOD = "."
    _ORDINARY_DETERMINERS = ("this", "that", "some", "every", "each")  # not "a"/"the"
    _MIDDLE_MARKERS = ("then", "next", "later", "afterwards")

    def __init__(
        self,
        seed: int = 0,
        *,
        n_topics: int = 4,
        nouns_per_topic: int = 60,
        shared_nouns: int = 60,
        verbs_per_topic: int = 20,
        shared_verbs: int = 20,
        n_adjectives: int = 48,
        n_sentiment: int = 8,
        n_adverbs: int = 24,
        topic_prob: float = 0.7,
        adjective_prob: float = 0.3,
        negation_prob: float = 0.2,
        marker_prob: float = 0.5,
        backref_prob: float = 0.3,
        zipf: float = 1.0,
        ordered_markers: bool = False,
    ):
        """Build the vocabulary. `n_sentiment` adjectives are positive and as many negative."""
        counts = {"n_topics": n_topics, "nouns_per_topic": nouns_per_topic,
                  "shared_nouns": shared_nouns, "verbs_per_topic": verbs_per_topic,
                  "shared_verbs": shared_verbs, "n_adverbs": n_adverbs}
        for name, value in counts.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if n_topics < 2:
            raise ValueError(f"n_topics must be at least 2 for topic tasks, got {n_topics}")
        if n_adverbs < 3:
            raise ValueError(f"n_adverbs must be at least 3 (one confusion set), got {n_adverbs}")
        if not (1 <= n_sentiment and 2 * n_sentiment + 3 <= n_adjectives):
            raise ValueError(f"need n_sentiment >= 1 and n_adjectives >= 2 * n_sentiment + 3 "
                             f"(at least 3 neutral adjectives), got {n_sentiment} and "
                             f"{n_adjectives}")
        probs = {"topic_prob": topic_prob, "adjective_prob": adjective_prob,
                 "negation_prob": negation_prob, "marker_prob": marker_prob,
                 "backref_prob": backref_prob}
        for name, value in probs.items():
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {value}")
        if not isinstance(ordered_markers, bool):
            raise ValueError(f"ordered_markers must be True or False, got {ordered_markers!r}")
        if zipf < 0:
            raise ValueError(f"zipf must be >= 0 (0 = uniform), got {zipf}")

        self.seed = seed
        self.n_topics = n_topics
        self.topics = [_TOPIC_NAMES[t] if t < len(_TOPIC_NAMES) else f"topic{t}"
                       for t in range(n_topics)]
        self.topic_prob, self.adjective_prob = topic_prob, adjective_prob
        self.ordered_markers = ordered_markers
        self.negation_prob, self.marker_prob, self.backref_prob = (negation_prob, marker_prob,
                                                                   backref_prob)
        rng = random.Random(seed)

        # 1. content words, made in confusion sets of 3-5 look-alikes
        sizes = {"NOUN": n_topics * nouns_per_topic + shared_nouns,
                 "VERB": n_topics * verbs_per_topic + shared_verbs,
                 "ADJ": n_adjectives, "ADV": n_adverbs}
        self.confusion_sets = self._make_confusion_sets(sizes, rng)

        # 2. every word's part of speech
        self.words_by_pos: dict[str, list[str]] = {
            "DET": list(self.DETERMINERS), "PREP": list(self.PREPOSITIONS),
            "MARKER": list(self.MARKERS), "NEG": [self.NEGATION], "PUNCT": [self.PERIOD],
            "NOUN": [], "VERB": [], "ADJ": [], "ADV": [],
        }
        for group in self.confusion_sets:
            self.words_by_pos[self._pos_from_suffix(group[0])].extend(group)
        self._pos = {w: pos for pos, words in self.words_by_pos.items() for w in words}
        self.vocabulary = [w for pos in POS_TAGS for w in self.words_by_pos[pos]]
        self._confusion_of = {w: group for group in self.confusion_sets for w in group}

        # 3. topics and sentiment: deal shuffled words into pools, so look-alikes scatter
        def deal(words: list[str], sizes: list[int]) -> list[list[str]]:
            words = rng.sample(words, len(words))
            bounds = list(itertools.accumulate(sizes, initial=0))
            return [words[a:b] for a, b in itertools.pairwise(bounds)]

        *topic_nouns, shared = deal(self.words_by_pos["NOUN"],
                                    [nouns_per_topic] * n_topics + [shared_nouns])
        self._noun_pools = (topic_nouns, shared)
        *topic_verbs, shared = deal(self.words_by_pos["VERB"],
                                    [verbs_per_topic] * n_topics + [shared_verbs])
        self._verb_pools = (topic_verbs, shared)
        self.positive_adjectives, self.negative_adjectives, self.neutral_adjectives = deal(
            self.words_by_pos["ADJ"], [n_sentiment, n_sentiment, n_adjectives - 2 * n_sentiment])
        self._topic_of = {w: t for pools in (topic_nouns, topic_verbs)
                          for t, pool in enumerate(pools) for w in pool}
        self._polarity = {**{w: 1 for w in self.positive_adjectives},
                          **{w: -1 for w in self.negative_adjectives}}

        # 4. Zipf-like sampling weights: the k-th word of a pool has weight 1 / k**zipf
        self._cum_weights: dict[int, list[float]] = {}
        self._zipf = zipf
        self._adjectives = rng.sample(self.words_by_pos["ADJ"], n_adjectives)
        self._adverbs = rng.sample(self.words_by_pos["ADV"], n_adverbs)

    # ------------------------------------------------------------------ building words

    @staticmethod
    def _make_confusion_sets(sizes: dict[str, int], rng: random.Random) -> list[list[str]]:
        """Groups of 3-5 words per part of speech; a group shares consonants, not vowels."""
        function_words = set(ToyLang.DETERMINERS + ToyLang.PREPOSITIONS + ToyLang.MARKERS)
        frames = []  # (first consonant, rest of stem): the vowel goes between them
        for tail in _STEM_TAILS:
            tier = [(c1, c2 + tail) for c1 in _CONSONANTS for c2 in _CONSONANTS]
            frames += rng.sample(tier, len(tier))
        frames_left = iter(frames)
        groups = []
        for pos, n_words in sizes.items():
            for size in _group_sizes(n_words, rng):
                for first, rest in frames_left:
                    vowels = [v for v in _VOWELS
                              if first + v + rest + _SUFFIX[pos] not in function_words]
                    if len(vowels) >= size:
                        break
                else:
                    raise ValueError("ToyLang ran out of pseudo-words: ask for fewer words")
                groups.append([first + v + rest + _SUFFIX[pos] for v in rng.sample(vowels, size)])
        return groups

    @staticmethod
    def _pos_from_suffix(word: str) -> str:
        return "VERB" if word.endswith("as") else {"o": "NOUN", "a": "ADJ", "e": "ADV"}[word[-1]]

    # ------------------------------------------------------------------ looking words up

    def pos_of(self, word: str) -> str:
        """The part of speech of a word: one of POS_TAGS."""
        if word not in self._pos:
            raise ValueError(f"{word!r} is not a ToyLang word (see ToyLang.vocabulary)")
        return self._pos[word]

    def tags(self, words: Sequence[str]) -> list[str]:
        """The part of speech of each word: gold tags for probes and augmentation."""
        return [self.pos_of(w) for w in words]

    def topic_of(self, word: str) -> int | None:
        """The topic a noun or verb belongs to, or None for shared and function words."""
        self.pos_of(word)  # raises for unknown words
        return self._topic_of.get(word)

    def polarity_of(self, word: str) -> int:
        """+1 for a positive adjective, -1 for a negative one, 0 for every other word."""
        self.pos_of(word)
        return self._polarity.get(word, 0)

    def confusable(self, word: str) -> list[str]:
        """The other members of the word's confusion set ([] for function words)."""
        self.pos_of(word)
        return [w for w in self._confusion_of.get(word, []) if w != word]

    def is_grammatical(self, words: Sequence[str]) -> bool:
        """Does the sentence follow ToyLang's word order? (Checks the tags, not the meaning.)"""
        if any(w not in self._pos for w in words):
            return False
        return _GRAMMAR.fullmatch("".join(_TAG_LETTER[self._pos[w]] for w in words)) is not None

    # ------------------------------------------------------------------ sampling text

    def documents(self, n_docs: int, sentences_per_doc: int | tuple[int, int],
                  seed: int) -> list[list[list[str]]]:
        """`n_docs` documents -> sentences -> words. A (low, high) length draws it per doc."""
        return [doc.sentences for doc in self.generate(n_docs, sentences_per_doc, seed)]

    def generate(self, n_docs: int, sentences_per_doc: int | tuple[int, int],
                 seed: int) -> list[ToyDocument]:
        """Like `documents`, but each document keeps its topic."""
        if isinstance(n_docs, bool) or not isinstance(n_docs, int) or n_docs < 1:
            raise ValueError(f"n_docs must be a positive int, got {n_docs!r}")
        low, high = ((sentences_per_doc, sentences_per_doc) if isinstance(sentences_per_doc, int)
                     else sentences_per_doc)
        if not 1 <= low <= high:
            raise ValueError("sentences_per_doc must be a positive int or a (low, high) range, "
                             f"got {sentences_per_doc!r}")
        rng = random.Random(seed)
        docs = []
        for _ in range(n_docs):
            topic = rng.randrange(self.n_topics)
            docs.append(ToyDocument(self._document(rng, topic, rng.randint(low, high)), topic))
        return docs

    def _document(self, rng: random.Random, topic: int, n_sentences: int) -> list[list[str]]:
        entities = self._distinct_nouns(rng, topic, n_sentences)
        return [_flatten(self._sentence_chunks(rng, topic, k, n_sentences, entities))
                for k in range(n_sentences)]

    def _sentence_chunks(self, rng: random.Random, topic: int, k: int, n_sentences: int,
                         entities: list[str], adjectives: bool = True) -> list[list[str]]:
        """Sentence k of a document, as chunks (marker, NPs, verb, ...), so tasks can edit NPs."""
        chunks = []
        if rng.random() < self.marker_prob:
            if k == 0 or k == n_sentences - 1:
                marker = "first" if k == 0 else "finally"
            elif self.ordered_markers:  # then, next, later, afterwards, afterwards, ...
                marker = self._MIDDLE_MARKERS[min(k, len(self._MIDDLE_MARKERS)) - 1]
            else:
                marker = rng.choice(self._MIDDLE_MARKERS)
            chunks.append([marker])
        for slot in rng.choice(_TEMPLATES):
            if slot == "subject":  # sentence 0 introduces N_0; later ones continue the chain
                chunks.append(["a", entities[0]] if k == 0 else ["the", entities[k - 1]])
            elif slot == "new":
                chunks.append(["a", entities[k]] if k > 0 else self._ordinary_np(rng, topic))
            elif slot == "extra":
                if k >= 2 and rng.random() < self.backref_prob:  # an older entity again
                    chunks.append(["the", entities[rng.randrange(k - 1)]])
                else:
                    chunks.append(self._ordinary_np(rng, topic))
            elif slot == "verb":
                chunks.append([self._pick(rng, self._verb_pools, topic)])
            elif slot == "adverb":
                chunks.append([self._zipf_choice(rng, self._adverbs)])
            elif slot == "prep":
                chunks.append([rng.choice(self.PREPOSITIONS)])
        chunks.append([self.PERIOD])
        if adjectives:
            for chunk in chunks:
                if chunk[0] in self.DETERMINERS and rng.random() < self.adjective_prob:
                    negated = rng.random() < self.negation_prob
                    _add_adjective(chunk, self._zipf_choice(rng, self._adjectives), negated)
        return chunks

    def _ordinary_np(self, rng: random.Random, topic: int) -> list[str]:
        return [rng.choice(self._ORDINARY_DETERMINERS), self._pick(rng, self._noun_pools, topic)]

    def _distinct_nouns(self, rng: random.Random, topic: int, n: int) -> list[str]:
        """n entity nouns for a document, all different (while the topic has enough)."""
        topic_pools, shared = self._noun_pools
        # only the pools `_pick` can draw from: with topic_prob 1.0 that is the topic's alone
        available = ((len(topic_pools[topic]) if self.topic_prob > 0 else 0)
                     + (len(shared) if self.topic_prob < 1 else 0))
        nouns: list[str] = []
        while len(nouns) < n:
            noun = self._pick(rng, self._noun_pools, topic)
            if noun not in nouns or len(nouns) >= available:
                nouns.append(noun)
        return nouns

    def _pick(self, rng: random.Random, pools, topic: int) -> str:
        """A noun or verb: from the topic's pool with probability topic_prob, else shared."""
        topic_pools, shared = pools
        pool = topic_pools[topic] if rng.random() < self.topic_prob else shared
        return self._zipf_choice(rng, pool)

    def _zipf_choice(self, rng: random.Random, words: list[str]) -> str:
        if len(words) not in self._cum_weights:
            weights = [1.0 / (rank + 1) ** self._zipf for rank in range(len(words))]
            self._cum_weights[len(words)] = list(itertools.accumulate(weights))
        return rng.choices(words, cum_weights=self._cum_weights[len(words)])[0]

    def _task_sentence_chunks(self, rng: random.Random, topic: int,
                              adjectives: bool = True) -> list[list[str]]:
        """One sentence from a random position of a fresh 3-8 sentence document."""
        n_sentences = rng.randint(3, 8)
        entities = self._distinct_nouns(rng, topic, n_sentences)
        k = rng.randrange(n_sentences)
        return self._sentence_chunks(rng, topic, k, n_sentences, entities, adjectives)

    def __repr__(self) -> str:
        counts = ", ".join(f"{pos}={len(self.words_by_pos[pos])}" for pos in POS_TAGS)
        return f"ToyLang(seed={self.seed}, {len(self.vocabulary)} words: {counts})"


def _add_adjective(noun_phrase: list[str], adjective: str, negated: bool) -> None:
    """DET NOUN -> DET [not] ADJ NOUN, in place."""
    noun_phrase[-1:-1] = [ToyLang.NEGATION, adjective] if negated else [adjective]


def _flatten(chunks: list[list[str]]) -> list[str]:
    return [word for chunk in chunks for word in chunk]


def _group_sizes(n: int, rng: random.Random) -> list[int]:
    """Split n (>= 3) into random parts of 3, 4 or 5."""
    sizes = []
    while n > 5:
        size = rng.choice([s for s in (3, 4, 5) if n - s >= 3])
        sizes.append(size)
        n -= size
    if n < 3:
        raise ValueError("each part of speech needs at least 3 content words")
    return sizes + [n]


# ------------------------------------------------------------------ ToyLang downstream tasks


def _check_task_size(n_examples: int) -> None:
    if isinstance(n_examples, bool) or not isinstance(n_examples, int) or n_examples < 1:
        raise ValueError(f"n_examples must be a positive int, got {n_examples!r}")


def _balanced_labels(n_examples: int, n_classes: int, rng: random.Random) -> list[int]:
    """0, 1, ..., n_classes-1, 0, 1, ... shuffled: classes differ in size by at most one."""
    labels = [i % n_classes for i in range(n_examples)]
    rng.shuffle(labels)
    return labels


def topic_task(lang: ToyLang, n_examples: int, seed: int,
               n_sentences: int = 1) -> list[tuple[list[str], int]]:
    """(a) Which topic is this text from? Examples are (words, topic).

    A text is `n_sentences` consecutive sentences of one document, joined. Balanced over the
    topics: chance is 1 / n_topics (25% by default). A sentence holds two or three topical
    nouns and verbs on average, but some hold only shared words, so single sentences top out
    a little below 100%.
    """
    _check_task_size(n_examples)
    if n_sentences < 1:
        raise ValueError(f"n_sentences must be at least 1, got {n_sentences}")
    rng = random.Random(seed)
    examples = []
    for topic in _balanced_labels(n_examples, lang.n_topics, rng):
        doc = lang._document(rng, topic, max(n_sentences, rng.randint(3, 8)))
        start = rng.randrange(len(doc) - n_sentences + 1)
        examples.append((_flatten(doc[start:start + n_sentences]), topic))
    return examples


def acceptability_task(lang: ToyLang, n_examples: int,
                       seed: int) -> list[tuple[list[str], int]]:
    """(b) Is this a well-formed sentence? 1 = as generated, 0 = two adjacent words swapped.

    The swap is chosen among the adjacent pairs whose exchange breaks the grammar (the final
    "." never moves). Balanced: chance is 50%. A swapped sentence has exactly the same words
    as a well-formed one, so a bag-of-words model stays at chance: only word order tells.
    """
    _check_task_size(n_examples)
    rng = random.Random(seed)
    examples = []
    for label in _balanced_labels(n_examples, 2, rng):
        words = _flatten(lang._task_sentence_chunks(rng, rng.randrange(lang.n_topics)))
        if label == 0:
            words = _swap_adjacent(lang, words, rng)
        examples.append((words, label))
    return examples


def _swap_adjacent(lang: ToyLang, words: list[str], rng: random.Random) -> list[str]:
    """Swap two neighbouring words (never the final '.') so that the result is ungrammatical."""
    def swapped(i: int) -> list[str]:
        return words[:i] + [words[i + 1], words[i]] + words[i + 2:]

    breaking = [i for i in range(len(words) - 2) if not lang.is_grammatical(swapped(i))]
    return swapped(rng.choice(breaking))


def continuation_task(lang: ToyLang, n_examples: int, seed: int,
                      negatives: str = "same_doc",
                      ) -> list[tuple[tuple[list[str], list[str]], int]]:
    """(c) Does sentence B continue sentence A? Examples are ((A, B), label), 1 = it does.

    A positive B is the next sentence of A's document. A negative B is, with
    `negatives="same_doc"` (default), another sentence of the same document (never A itself,
    so the topic is no help: the entity chain and order markers are), or with
    `negatives="other_doc"` a sentence of another document of a random topic (BERT's NSP
    negatives; the topic often gives it away). Balanced: chance is 50%.
    """
    _check_task_size(n_examples)
    if negatives not in ("same_doc", "other_doc"):
        raise ValueError(f"negatives must be 'same_doc' or 'other_doc', got {negatives!r}")
    rng = random.Random(seed)
    examples = []
    for label in _balanced_labels(n_examples, 2, rng):
        doc = lang._document(rng, rng.randrange(lang.n_topics), rng.randint(4, 8))
        i = rng.randrange(len(doc) - 1)
        if label == 1:
            b = doc[i + 1]
        elif negatives == "same_doc":
            b = doc[rng.choice([j for j in range(len(doc)) if j not in (i, i + 1)])]
        else:
            other = lang._document(rng, rng.randrange(lang.n_topics), rng.randint(4, 8))
            b = rng.choice(other)
        examples.append(((doc[i], b), label))
    return examples


POLARITY_KINDS = ("plain", "negated", "distractor")


def polarity_task(lang: ToyLang, n_examples: int, seed: int,
                  kinds: Sequence[str] = POLARITY_KINDS, return_kinds: bool = False):
    """(d) Is the sentence positive (1) or negative (0)? Needs negation and its scope.

    Each sentence holds exactly one sentiment adjective, and the label is its polarity,
    flipped when "not" stands right before it. Kinds of example, equally many of each:

    - "plain":      "... a kera bilo ..."                 (maybe a neutral adjective elsewhere)
    - "negated":    "... a not kera bilo ... a dusa ..."  (label flipped)
    - "distractor": "... a kera bilo ... a not dusa ..."  ("not" negates a neutral adjective)

    Negated and distractor sentences hold the same kinds of words, so a bag-of-words model
    scores at most about 67% with the three kinds (100% on plain, 50% on the rest); chance is
    50% (labels are balanced). With `return_kinds=True` examples are (words, label, kind).
    """
    _check_task_size(n_examples)
    if not kinds or any(kind not in POLARITY_KINDS for kind in kinds):
        raise ValueError(f"kinds must be a non-empty subset of {POLARITY_KINDS}, got {kinds!r}")
    rng = random.Random(seed)
    labels = _balanced_labels(n_examples, 2, rng)
    seen = [0, 0]  # examples so far per label: cycle through the kinds within each label
    examples = []
    for label in labels:
        kind = kinds[seen[label] % len(kinds)]
        seen[label] += 1
        chunks = lang._task_sentence_chunks(rng, rng.randrange(lang.n_topics), adjectives=False)
        noun_phrases = [c for c in chunks if c[0] in ToyLang.DETERMINERS]  # every template: >= 2
        target, other = rng.sample(noun_phrases, 2)
        want_positive = (label == 1) != (kind == "negated")
        sentiment = lang.positive_adjectives if want_positive else lang.negative_adjectives
        _add_adjective(target, rng.choice(sentiment), negated=kind == "negated")
        if kind != "plain" or rng.random() < 0.5:
            _add_adjective(other, rng.choice(lang.neutral_adjectives),
                           negated=kind == "distractor")
        words = _flatten(chunks)
        examples.append((words, label, kind) if return_kinds else (words, label))
    return examples
