"""Count words in a text file and print the three most frequent."""
import argparse
import re
from collections import Counter


def main():
    parser = argparse.ArgumentParser(description="Count the words of a text file.")
    parser.add_argument("file")
    args = parser.parse_args()
    words = re.findall(r"[a-z']+", open(args.file, encoding="utf-8").read().lower())
    print(f"words={len(words)}")
    for word, n in Counter(words).most_common(3):
        print(f"{word}={n}")


if __name__ == "__main__":
    main()
