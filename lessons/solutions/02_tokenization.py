"""Solutions to lesson 02's exercises: the two helpers of byte-pair encoding."""


def my_get_stats(ids):
    """Count consecutive pairs: [1, 2, 3, 1, 2] -> {(1, 2): 2, (2, 3): 1, (3, 1): 1}."""
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def my_merge(ids, pair, idx):
    """Replace each occurrence of `pair`, left to right: [1, 2, 3, 1, 2], (1, 2), 4 -> [4, 3, 4]."""
    merged, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(idx)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


GRADERS = {"get_stats": my_get_stats, "merge": my_merge}
