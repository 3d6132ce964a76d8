"""`python -m minibert` prints the course map: every lesson, what it teaches, its last run time."""

from __future__ import annotations

import sys

from .course.course_map import course_map_text


def main() -> int:
    try:
        print(course_map_text())
    except ValueError as error:  # a lessons/timings.json cut short or edited by hand
        print(f"python -m minibert: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
