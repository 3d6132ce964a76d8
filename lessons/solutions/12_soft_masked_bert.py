"""Solutions to lesson 12's exercises: soft masking, and sentence-level detection scores."""


def my_soft_mask(p, e, e_mask):
    p = p.unsqueeze(-1)                              # (B, T, 1): one weight per character
    return p * e_mask + (1 - p) * e                  # (B, T, H): [MASK] where p -> 1


def my_sentence_detection(sources, predictions, targets):
    right = right_with_errors = flagged = erroneous = 0
    for source, prediction, target in zip(sources, predictions, targets):
        gold = {i for i, (s, t) in enumerate(zip(source, target)) if s != t}
        found = {i for i, (s, p) in enumerate(zip(source, prediction)) if s != p}
        right += found == gold                       # a clean sentence left alone is right
        right_with_errors += found == gold and bool(gold)
        flagged += bool(found)
        erroneous += bool(gold)
    precision = right_with_errors / flagged if flagged else 0.0
    recall = right_with_errors / erroneous if erroneous else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return right / len(sources), precision, recall, f1


GRADERS = {  # grader name in minibert.check -> solution
    "soft_mask": my_soft_mask,
    "sentence_detection": my_sentence_detection,
}
