#!/usr/bin/env python3
"""Lists the Swift functions longer than a screen (STYLE.md: "Functions fit on a screen").

A function's length is its code lines, from the line of its `func`, `init`, `deinit` or
`subscript` to the line of its closing brace, leaving out blank lines and lines that hold only
comments. Braces are matched on a scan that skips comments (nested `/* */` too), string
literals (multi-line, raw `#"..."#`, and the interpolations inside them), so a brace in a string
or a comment does not count (bare `/regex/` literals are not understood; Sources has none). A
nested function is listed on its own and also counts in the function around it.

    python3 Scripts/function-lengths.py [--limit N] [PATH ...]

PATH is a folder (every .swift file below it) or a file; the default is Sources. Prints one line
per function over the limit (default 50), longest first, as `path:line: name: N lines`, and exits
1 if there is any, 0 otherwise. Python 3 and its standard library only.
"""

import argparse
import os
import re
import sys

DECLARATION = re.compile(r"\b(func|init|deinit|subscript)\b")
# Words that begin another declaration: seen before a pending function's body, they end it (a
# protocol requirement, which has none).
OTHER_DECLARATION = re.compile(
    r"\b(func|init|deinit|subscript|var|let|case|typealias|associatedtype|struct|class|enum|"
    r"protocol|extension|actor)\b")
# A string literal's opening: raw (`#`s), multi-line (`"""` ending its line) or not.
STRING_START = re.compile(r'(#*)("""(?=[ \t]*\n)|")')
NAME = re.compile(r"\s*(?:[`]?([A-Za-z_][A-Za-z0-9_]*|[^\s(<]+)[`]?)")


class Scanner:
    """Walks one file's text, keeping the code apart from comments and string contents."""

    def __init__(self, text):
        self.text = text
        self.code_lines = set()   # 1-based lines holding at least one code character
        self.events = []          # (kind, line, position, paren depth): "word", "{", "}"

    def scan(self):
        text, i, n = self.text, 0, len(self.text)
        line = 1
        # A stack of contexts: ("code", paren depth at entry) for the file and each
        # interpolation, ("string", pounds, multiline) for string literals.
        stack = [["code", 0]]
        parens = 0
        previous = ""   # the last code character before this one (comments skipped)
        while i < n:
            c = text[i]
            top = stack[-1]
            if c == "\n":
                line += 1
                i += 1
                continue
            if top[0] == "string":
                _, pounds, multiline = top
                closing = ('"""' if multiline else '"') + "#" * pounds
                if c == "\\" and text.startswith("#" * pounds, i + 1):
                    after = i + 1 + pounds
                    if after < n and text[after] == "(":
                        self.code_lines.add(line)
                        stack.append(["code", parens])
                        parens += 1
                        i = after + 1
                        continue
                    if after < n and text[after] == "\n":
                        line += 1   # a line continuation
                    i = after + 1   # an escaped character
                    continue
                if text.startswith(closing, i):
                    self.code_lines.add(line)
                    stack.pop()
                    i += len(closing)
                    continue
                self.code_lines.add(line)
                i += 1
                continue
            # Code.
            if text.startswith("//", i):
                end = text.find("\n", i)
                i = n if end < 0 else end
                continue
            if text.startswith("/*", i):
                depth, i = 1, i + 2
                while i < n and depth:
                    if text.startswith("/*", i):
                        depth, i = depth + 1, i + 2
                    elif text.startswith("*/", i):
                        depth, i = depth - 1, i + 2
                    else:
                        if text[i] == "\n":
                            line += 1
                        i += 1
                continue
            if c.isspace():
                i += 1
                continue
            self.code_lines.add(line)
            before, previous = previous, c
            if c == "#" or c == '"':
                match = STRING_START.match(text, i)
                if match:
                    stack.append(["string", len(match.group(1)), match.group(2) == '"""'])
                    i = match.end()
                    continue
            if c == "(" or c == "[":
                parens += 1
            elif c == ")" or c == "]":
                parens -= 1
                if len(stack) > 1 and top[0] == "code" and parens == top[1]:
                    stack.pop()   # the end of an interpolation
                    i += 1
                    continue
            elif c == "{" or c == "}":
                self.events.append((c, line, i, parens))
            elif c.isalpha() or c == "_":
                match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(text, i)
                if before != ".":   # not a member such as `.init` or `self.init`
                    self.events.append(("word", line, i, parens, match.group(0)))
                i = match.end()
                continue
            i += 1
        return self


def functions(path):
    """The functions of one file: (name, first line, last line, code lines)."""
    text = open(path, encoding="utf-8").read()
    scanner = Scanner(text).scan()
    found = []
    braces = []        # open braces: the function they begin, or None
    pending = None     # a declaration waiting for its body: (name, line, paren depth)
    for event in scanner.events:
        kind, line, position, parens = event[:4]
        if kind == "word":
            word = event[4]
            if pending and parens == pending[2] and OTHER_DECLARATION.fullmatch(word):
                pending = None
            if DECLARATION.fullmatch(word):
                name = word
                if word == "func":
                    match = NAME.match(text, position + len(word))
                    name = match.group(1) if match else "func"
                pending = (name, line, parens)
        elif kind == "{":
            if pending and parens == pending[2]:
                braces.append(pending)
                pending = None
            else:
                braces.append(None)
        else:   # "}"
            if pending and parens == pending[2]:
                pending = None   # the end of the scope around a declaration without a body
            if not braces:
                continue
            opened = braces.pop()
            if opened:
                name, first, _ = opened
                count = sum(1 for number in range(first, line + 1) if number in scanner.code_lines)
                found.append((name, first, line, count))
    return found


def swift_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, folders, files in os.walk(path):
            folders[:] = sorted(folder for folder in folders if not folder.startswith("."))
            for name in sorted(files):
                if name.endswith(".swift"):
                    yield os.path.join(root, name)


def main():
    parser = argparse.ArgumentParser(description="Lists Swift functions longer than a screen.")
    parser.add_argument("--limit", type=int, default=50, help="the most code lines a function may have (default 50)")
    parser.add_argument("paths", nargs="*", default=["Sources"], help="folders or files (default Sources)")
    arguments = parser.parse_args()
    over = []
    for path in swift_files(arguments.paths):
        for name, first, _, count in functions(path):
            if count > arguments.limit:
                over.append((count, path, first, name))
    for count, path, first, name in sorted(over, key=lambda item: (-item[0], item[1], item[2])):
        print(f"{path}:{first}: {name}: {count} lines")
    if over:
        print(f"{len(over)} function(s) over {arguments.limit} code lines", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
