#!/usr/bin/env python3
"""Writes a man(7) page for a swift-argument-parser tool from its own definitions.

    manpage.py TOOL SECTION VERSION DATE < dump.json > TOOL.SECTION

where dump.json is `TOOL --experimental-dump-help` (the ArgumentParser ToolInfo JSON: commands,
abstracts, discussions, arguments). The page therefore lists exactly the commands and options
the binary accepts. Options that most commands share (--socket, --json, --help, ...) are
described once, under COMMON OPTIONS.
"""
import json
import sys


def esc(text):
    """Escapes text for roff: backslashes, hyphens in words, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def paragraphs(text):
    """A discussion as roff paragraphs; indented lines (examples) stay as they are."""
    out = []
    for block in text.strip().split("\n\n"):
        lines = block.split("\n")
        if any(l.startswith("  ") for l in lines):
            out += [".PP", ".nf"] + [esc(l) for l in lines] + [".fi"]
        else:
            out += [".PP", esc(" ".join(l.strip() for l in lines))]
    return out


def flag_names(arg):
    names = []
    for n in arg.get("names", []):
        prefix = {"short": "-", "long": "--", "longWithSingleDash": "-"}[n["kind"]]
        names.append(prefix + n["name"])
    return names


def key(arg):
    return (tuple(flag_names(arg)) or (arg.get("valueName"),), arg.get("abstract", ""))


def describe(arg):
    """`.TP` item for one argument."""
    value = arg.get("valueName", "")
    if arg["kind"] == "positional":
        head = f"\\fI{esc(value)}\\fR" + (" ..." if arg.get("isRepeating") else "")
    else:
        head = ", ".join(f"\\fB{esc(n)}\\fR" for n in flag_names(arg))
        if arg["kind"] == "option":
            head += f" \\fI{esc(value)}\\fR"
    text = arg.get("abstract", "")
    if arg.get("defaultValue") not in (None, ""):
        text += f" (default: {arg['defaultValue']})"
    if arg.get("isRepeating") and arg["kind"] == "option":
        text += " Repeat for several."
    out = [".TP", head]
    if text:
        out.append(esc(text))
    if arg.get("discussion"):
        out.append(esc(arg["discussion"] if isinstance(arg["discussion"], str) else ""))
    return out


def usage(path, args, common):
    parts = [f"\\fB{esc(' '.join(path))}\\fR"]
    if any(key(a) in common for a in args):
        parts.append("[\\fIcommon options\\fR]")
    for a in args:
        if key(a) in common or not a.get("shouldDisplay", True):
            continue
        if a["kind"] == "positional":
            s = f"\\fI{esc(a['valueName'])}\\fR" + (" ..." if a.get("isRepeating") else "")
        else:
            s = f"\\fB{esc(flag_names(a)[-1])}\\fR"
            if a["kind"] == "option":
                s += f" \\fI{esc(a['valueName'])}\\fR"
        parts.append(s if not a.get("isOptional") else f"[{s}]")
    return " ".join(parts)


def leaves(cmd, path):
    subs = [s for s in cmd.get("subcommands", []) if s["commandName"] != "help"]
    if not subs:
        yield path, cmd
    for s in subs:
        yield from leaves(s, path + [s["commandName"]])


def render(tool, section, version, date, info):
    root = info["command"]
    commands = list(leaves(root, [tool]))
    shown = lambda c: [a for a in c.get("arguments", []) if a.get("shouldDisplay", True)]
    counts = {}
    for _, c in commands:
        for a in shown(c):
            counts.setdefault(key(a), [0, a])[0] += 1
    common_keys = {k for k, (n, _) in counts.items() if 2 * n >= len(commands)}
    common = [a for k, (n, a) in counts.items() if k in common_keys]

    out = [f'.\\" Generated from `{tool} --experimental-dump-help` by packaging/manpage.py.',
           f'.TH {tool.upper()} {section} {date} "roombridge {version}" "User Commands"',
           ".SH NAME", f"{tool} \\- {esc(root.get('abstract', ''))}",
           ".SH SYNOPSIS", f"\\fB{tool}\\fR \\fIcommand\\fR [\\fIoptions\\fR]",
           ".br", f"\\fB{tool}\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR",
           ".SH DESCRIPTION"]
    out += paragraphs(root.get("abstract", ""))
    out += paragraphs(root.get("discussion") or "")
    out += [".SH COMMON OPTIONS", "Most commands accept these; the usage line of each command says so."]
    for a in common:
        out += describe(a)
    out.append(".SH COMMANDS")
    for path, cmd in commands:
        out += [".SS " + '"' + esc(" ".join(path[1:])) + '"', usage(path, shown(cmd), common_keys)]
        out += paragraphs(cmd.get("abstract", ""))
        if cmd.get("discussion"):
            out += paragraphs(cmd["discussion"])
        own = [a for a in shown(cmd) if key(a) not in common_keys]
        if own:
            out.append(".RS")
            for a in own:
                out += describe(a)
            out.append(".RE")
    out += [".SH ENVIRONMENT", ".TP", ".B ROOMBRIDGE_SOCKET",
            "The socket path when \\fB\\-\\-socket\\fR is not given.",
            ".SH SEE ALSO", ".BR roombridged (8)"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: manpage.py TOOL SECTION VERSION DATE < dump.json > page")
    tool, section, version, date = sys.argv[1:]
    sys.stdout.write(render(tool, section, version, date, json.load(sys.stdin)))
