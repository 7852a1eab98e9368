"""Count the non-empty lines of a file."""
import argparse


def main():
    parser = argparse.ArgumentParser(description="Count non-empty lines.")
    parser.add_argument("file")
    args = parser.parse_args()
    with open(args.file, encoding="utf-8") as fh:
        print(f"lines={sum(1 for line in fh if line.strip())}")


if __name__ == "__main__":
    main()
