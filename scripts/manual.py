#!/usr/bin/env python3
"""Writes intercom(1), the man page, to standard output, from what the program says about
itself: `intercom --help` for the top level and the list of subcommands, and each
subcommand's `--experimental-dump-help` JSON (swift-argument-parser's description of its
arguments) for the rest. The top level's own dump describes its default subcommand (talk)
instead of itself, which is why swift-argument-parser's generate-manual plugin makes a page
for `intercom talk` alone; here the page covers the top level and every subcommand.

    scripts/manual.py INTERCOM VERSION [DATE]

Standard library only (Debian's python3 as it is).
"""
import datetime
import json
import re
import subprocess
import sys


def run(binary, *arguments):
    return subprocess.run([binary, *arguments], check=True, capture_output=True, text=True).stdout


def escape(text):
    """Plain text as roff: backslashes and hyphens escaped, no line starting a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def overview(help_text):
    """The top level's abstract, discussion and listed subcommands, from its --help."""
    sections = {}
    current = None
    for line in help_text.splitlines():
        heading = re.match(r"^([A-Z][A-Z ]+):\s?(.*)$", line)
        if heading:
            current = heading.group(1)
            sections[current] = [heading.group(2)] if heading.group(2) else []
        elif current:
            sections[current].append(line)
    paragraphs = "\n".join(sections.get("OVERVIEW", [])).strip().split("\n\n")
    abstract = paragraphs[0].strip()
    discussion = " ".join(" ".join(p.split()) for p in paragraphs[1:])
    subcommands = []
    for line in sections.get("SUBCOMMANDS", []):
        match = re.match(r"^  ([a-z][a-z0-9-]*)( \(default\))?(\s|$)", line)
        if match and match.group(1) != "help":
            subcommands.append((match.group(1), match.group(2) is not None))
    return abstract, discussion, subcommands


def option_name(name):
    prefix = {"long": "--", "short": "-", "longWithSingleDash": "-"}[name["kind"]]
    return prefix + name["name"]


def argument_label(argument):
    value = argument.get("valueName")
    if argument["kind"] == "positional":
        label = "\\fI" + escape(value or "value") + "\\fR"
        return label + ("..." if argument.get("isRepeating") else "")
    names = ", ".join("\\fB" + escape(option_name(n)) + "\\fR" for n in argument.get("names", []))
    if argument["kind"] == "option":
        names += " \\fI" + escape(value or "value") + "\\fR"
    return names


def argument_text(argument):
    text = argument.get("abstract", "")
    if argument.get("discussion"):
        text += " " + argument["discussion"]
    values = argument.get("allValues")
    if values and argument["kind"] != "flag":
        text += " (values: " + ", ".join(values) + ")"
    default = argument.get("defaultValue")
    if default not in (None, "") and argument["kind"] == "option":
        text += " (default: " + default + ")"
    return escape(text.strip())


def shown_arguments(command):
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True):
            continue
        names = {n["name"] for n in argument.get("names", [])}
        if names & {"help", "h", "version", "experimental-dump-help"}:
            continue
        yield argument


def synopsis(name, command):
    parts = []
    has_options = False
    for argument in shown_arguments(command):
        if argument["kind"] == "positional":
            label = "<" + (argument.get("valueName") or "value") + ">"
            parts.append(("[" + label + "]") if argument.get("isOptional") else label)
        else:
            has_options = True
    return "\\fB" + escape(name) + "\\fR" + (" [\\fIoptions\\fR]" if has_options else "") + "".join(
        " " + escape(p) for p in parts)


def arguments_roff(command):
    out = []
    section = None
    for argument in shown_arguments(command):
        title = argument.get("sectionTitle") or ("Arguments" if argument["kind"] == "positional" else "Options")
        if title != section:
            section = title
            out.append(".PP")
            out.append("\\fI" + escape(title) + ":\\fR")
        out.append(".TP")
        out.append(argument_label(argument))
        out.append(argument_text(argument))
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: manual.py INTERCOM VERSION [DATE]")
    binary, version = sys.argv[1], sys.argv[2]
    date = sys.argv[3] if len(sys.argv) == 4 else datetime.date.today().isoformat()
    abstract, discussion, subcommands = overview(run(binary, "--help"))
    if not subcommands:
        sys.exit("manual.py: no subcommands in `intercom --help`")

    out = [
        '.\\" intercom(1), made by scripts/manual.py from the program\'s own help.',
        '.TH INTERCOM 1 "%s" "intercom %s" "User Commands"' % (date, version),
        ".SH NAME",
        "intercom \\- " + escape(abstract[0].lower() + abstract[1:].rstrip(".")),
        ".SH SYNOPSIS",
        "\\fBintercom\\fR [\\fIsubcommand\\fR] [\\fIoptions\\fR]",
        ".br",
        "\\fBintercom \\-\\-version\\fR",
        ".SH DESCRIPTION",
        escape(abstract),
        ".PP",
        escape(discussion),
        ".SH SUBCOMMANDS",
    ]
    for name, default in subcommands:
        info = json.loads(run(binary, name, "--experimental-dump-help"))["command"]
        out.append(".SS intercom " + escape(name) + (" (the default)" if default else ""))
        out.append(synopsis("intercom " + name, info))
        out.append(".PP")
        out.append(escape(info.get("abstract", "")))
        if info.get("discussion"):
            out.append(".PP")
            out.append(escape(info["discussion"]))
        out += arguments_roff(info)
    out += [
        ".SH FILES",
        ".TP",
        "\\fI~/.config/intercom/config.toml\\fR",
        "Settings, TOML ([audio], [network], [talk] tables): what the command line leaves out "
        "($XDG_CONFIG_HOME/intercom/config.toml when XDG_CONFIG_HOME is set, or the file "
        "\\fB--config\\fR names). "
        "\\fBintercom config\\fR prints the settings a call would use and where each came from.",
        ".TP",
        "\\fI/etc/intercom/config.toml\\fR",
        "The service's settings (intercom.service names it with \\fB--config\\fR); an example with "
        "every setting commented out is installed there.",
        ".TP",
        "\\fI~/.local/state/intercom/\\fR",
        "This device's identity and its paired devices ($STATE_DIRECTORY, else "
        "$XDG_STATE_HOME/intercom); \\fI/var/lib/intercom/\\fR for the service.",
        ".TP",
        "\\fI/run/intercom/status.sock\\fR",
        "The service's status socket ($XDG_RUNTIME_DIR/intercom/status.sock for a daemon started "
        "in a session). \\fBintercom status\\fR asks there when nothing answers at the session's "
        "own path. Members of the \\fBintercom\\fR group may read the status; pairing through it "
        "is for root and the service's user.",
        ".TP",
        "\\fI/lib/systemd/system/intercom.service\\fR",
        "The hardened unit: \\fBsystemctl enable \\-\\-now intercom\\fR starts it at boot, "
        "\\fBsystemctl reload intercom\\fR re\\-reads the settings during the call.",
        ".SH SEE ALSO",
        "\\fBsystemd.exec\\fR(5), \\fBavahi\\-daemon\\fR(8), \\fBgpioinfo\\fR(1), and the guides in "
        "\\fI/usr/share/doc/intercom/\\fR (README.md, Docs/raspberry\\-pi.md, Docs/security.md).",
    ]
    print("\n".join(out))


if __name__ == "__main__":
    main()
