import sys


def count_words(text):
    return len(text.split())


if __name__ == "__main__":
    # Bug on purpose for the survey to find: no argument check.
    with open(sys.argv[1], encoding="utf-8") as f:
        print(count_words(f.read()))
