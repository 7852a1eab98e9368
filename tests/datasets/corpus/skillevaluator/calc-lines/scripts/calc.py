"""Evaluate one arithmetic expression per line of a file (no eval: a small AST walker)."""
import argparse
import ast
import operator

OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
       ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg}


def value(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](value(node.left), value(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPS:
        return OPS[type(node.op)](value(node.operand))
    raise ValueError("Invalid expression")


def main():
    parser = argparse.ArgumentParser(description="Evaluate each line of a file as arithmetic.")
    parser.add_argument("file", help="text file with one expression per line")
    args = parser.parse_args()
    with open(args.file, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                result = value(ast.parse(line.strip(), mode="eval").body)
                print(f"Result: {result:g}")


if __name__ == "__main__":
    main()
