#!/bin/sh
# The documents a newcomer reads hold together: every relative link in README.md and
# docs/*.md names a file that exists and, with a #fragment, a heading of that file (GitHub's
# anchor for it); the README's text screenshot is docs/screenshot.txt, which docs/console.md
# says it is. And they say what the program does today: the screenshot is what the console
# draws (redrawn in tmux the way docs/console.md says it was taken), the README's sample of
# `tune` is what that command prints (every column but the timing one), every option the
# documents give a command is one its --help lists, every environment variable the program
# reads is in the man page's ENVIRONMENT, every source path a document quotes is in the tree
# (and every file docs/architecture.md's layer table names, under its row's folders),
# every command --help lists is in the README, and every make target a document gives is the
# Makefile's and the other way round.
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${TUNEDECK_BIN:-$root/build/tunedeck}"
tmp="$(mktemp -d)"
T="$tmp" # lib/tmux.sh's scratch folder
tmux_screen="$tmp/screen.txt"
. "$root/tests/integration/lib/tmux.sh"
trap 'tmux_stop; rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
fails=0
fail() { echo "docs: FAIL: $*"; fails=$((fails + 1)); }

/usr/bin/python3 - "$root" >"$tmp/links" <<'PY'
import os, re, sys
root = sys.argv[1]
def slug(heading):
    # GitHub's: lower case, drop what is not a letter, digit, space, '-' or '_', spaces to '-'.
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")
def anchors(path):
    seen, out, fence = {}, set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} (.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    return out
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
checked = 0
for doc in docs:
    text = open(os.path.join(root, doc), encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        checked += 1
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(root, os.path.dirname(doc), path)) if path else os.path.join(root, doc)
        if not os.path.exists(full):
            print("%s: link to %s: no such file" % (doc, target))
        elif frag and full.endswith(".md") and frag not in anchors(full):
            print("%s: link to %s: no heading with that anchor in %s" % (doc, target, os.path.relpath(full, root)))
if checked < 20:
    print("only %d links found: the check did not read the documents" % checked)
PY
[ $? -eq 0 ] || fail "the link check did not run"
[ -s "$tmp/links" ] && fail "broken links: $(cat "$tmp/links")"

# The README's first fenced block after '## The console' is the screenshot.
awk '/^## The console/ { c = 1 } c && /^```/ { if (f) exit; f = 1; next } f' "$root/README.md" >"$tmp/shot"
[ -s "$tmp/shot" ] || fail "no screenshot under '## The console' in README.md"
cmp -s "$tmp/shot" "$root/docs/screenshot.txt" ||
    fail "README.md's screenshot differs from docs/screenshot.txt: $(diff "$tmp/shot" "$root/docs/screenshot.txt" | head -4)"

# The screenshot is the default console at 100 x 30 paused at trial 20 of 60 (docs/console.md).
# Reached without a race: a budget of 20 ends there by itself, Space pauses, and ':budget 60'
# raises the budget without launching a trial while paused. The trials are the seed's, so
# the screen is the same on every machine; pace only sets how fast they come.
tmux_console shot 100 30 xterm-256color "$bin" --budget 20 --pace-ms 50
if ! tmux_wait shot ' 20/20 .*\| done' 120; then
    fail "the console did not reach trial 20 of 20: $(head -1 "$tmux_screen")"
else
    tmx send-keys -t shot Space
    tmux_wait shot '\| paused$' 20 || fail "Space did not pause: $(head -1 "$tmux_screen")"
    tmx send-keys -t shot : b u d g e t Space 6 0 Enter
    # its message ("budget set to 60 trials") holds the status line until a key: Ctrl-L,
    # which only redraws, gives the hints back
    tmux_wait shot 'budget set to 60 trials' 20 && tmx send-keys -t shot C-l
    if tmux_wait shot ' 20/60 .*\| paused$' 20 && tmux_wait shot 'Space resume  q quit' 20; then
        # The whole screen is compared until it holds (a paused console settles): a capture
        # can hold a frame in part, its top row drawn and rows below not yet (see
        # lib/tmux.sh's tmux_wait_check).
        tmux_wait_check shot 20 cmp -s "$tmux_screen" "$root/docs/screenshot.txt" ||
            fail "docs/screenshot.txt is not what the console draws (regenerate it, README.md too): $(diff "$root/docs/screenshot.txt" "$tmux_screen" | head -6)"
        # The cluster view of the same moment: its simulated scheduler runs in wall-clock
        # time, so only what does not depend on it is compared: the tab bar, the tuning
        # workers' pane (the left 50 columns of its rows) and the status line. The capture
        # that first showed the pane's title had the tune view's status line under it, once,
        # on a loaded machine: the frame was not all written yet.
        cat >"$tmp/cluster.py" <<'PY'
import sys
doc, real = (open(f, encoding="utf-8").read().splitlines() for f in sys.argv[1:3])
def part(lines):
    return [lines[0]] + [l[:50] for l in lines[1:16]] + [lines[-1]] if len(lines) >= 17 else lines
for i, (a, b) in enumerate(zip(part(doc), part(real))):
    if a != b:
        print("line %d: %r, the console draws %r" % (i + 1 if i < 16 else len(doc), a, b))
        break
else:
    if len(doc) != len(real):
        print("%d lines, the console draws %d" % (len(doc), len(real)))
PY
        cluster_agrees() {
            /usr/bin/python3 "$tmp/cluster.py" "$root/docs/screenshot-cluster.txt" "$tmux_screen" >"$tmp/cluster" &&
            [ ! -s "$tmp/cluster" ]
        }
        tmx send-keys -t shot 2
        if tmux_wait shot 'Tuning workers: trial 20' 20; then
            tmux_wait_check shot 20 cluster_agrees ||
                fail "docs/screenshot-cluster.txt is not what the console draws: $(cat "$tmp/cluster")"
        else
            fail "'2' did not show the cluster view: $(head -2 "$tmux_screen")"
        fi
    else
        fail "':budget 60' while paused did not show 20/60 paused: $(sed -n '1p;$p' "$tmux_screen")"
    fi
fi

# The README's sample of `tune`: each row it shows is the row the command prints today, but
# for the suggest column (milliseconds of this machine's CPU).
/usr/bin/python3 - "$root/README.md" "$bin" >"$tmp/sample" 2>&1 <<'PY'
import re, subprocess, sys
readme, binary = sys.argv[1], sys.argv[2]
m = re.search(r"```\n\$ build/tunedeck (tune [^\n]*)\n(.*?)```", open(readme, encoding="utf-8").read(), re.S)
if not m:
    sys.exit("README.md: no '$ build/tunedeck tune ...' sample found")
args, shown = m.group(1).split(), m.group(2).splitlines()
real = subprocess.run([binary] + args, capture_output=True, text=True).stdout.splitlines()
def cols(line):  # trial status time_s best_s predicted W PS [suggest] note
    f = line.split(None, 8)
    return f[:7] + [" ".join(f[8:]).strip()] if len(f) >= 8 and f[0].isdigit() else [line.strip()]
rows = {cols(l)[0]: cols(l) for l in real}
compared = 0
for line in shown:
    if line.strip() in ("", "..."):
        continue
    want = cols(line)
    got = rows.get(want[0])
    compared += 1
    if got != want:
        print("README.md's sample of 'tunedeck %s': %r, the command prints %r" % (" ".join(args), line.strip(), " ".join(got) if got else "no such row"))
if compared < 3:
    print("only %d lines of the README's tune sample compared" % compared)
PY
[ -s "$tmp/sample" ] && fail "$(head -5 "$tmp/sample")"

# Every option a document gives a tunedeck command (a command line in a code block, or one
# quoted in the prose) is one that command's --help lists: a flag renamed or dropped in the
# code, or misspelt in a document, fails here. What is quoted inside the line (a --trial-cmd's
# own options) and comments are not the command's.
/usr/bin/python3 - "$root" "$bin" >"$tmp/options" <<'PY'
import os, re, shlex, subprocess, sys
root, binary = sys.argv[1], sys.argv[2]
build = os.path.dirname(binary)
COMMANDS = ("tune", "console", "schedule", "sessions", "hosts", "sim-trial")
helps = {}
def help_of(prog, cmd):
    key = (prog, cmd)
    if key not in helps:
        argv = [os.path.join(build, prog)] + cmd.split() + ["--help"]
        r = subprocess.run(argv, capture_output=True, text=True)
        helps[key] = r.stdout + r.stderr
    return helps[key]
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
checked = 0
for doc in docs:
    text = open(os.path.join(root, doc), encoding="utf-8").read()
    blocks = re.findall(r"^```(?:sh)?\n(.*?)^```", text, re.S | re.M)
    # and the command lines quoted in the prose (`tunedeck tune --resume ID`)
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M).replace("\n", " ")
    blocks += re.findall(r"`((?:build/)?tunedeck(?:-worker|-rexec)?(?: [^`]*)?)`", prose)
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            m = re.match(r"\s*(?:\$ )?(?:[A-Z_]+=\S+ )*(?:build/|/usr/(?:local/)?bin/)?(tunedeck(?:-worker|-rexec)?)(?: (.*)|$)", line)
            if not m:
                continue
            prog, rest = m.group(1), m.group(2) or ""
            rest = re.sub(r"'[^']*'|\"[^\"]*\"", "''", rest)   # a --trial-cmd's own options
            rest = re.sub(r"(^|\s)#.*", "", rest)                # a comment
            words = rest.split()
            cmd = ""
            if prog == "tunedeck":
                cmd = words[0] if words and words[0] in COMMANDS else "console"
                if cmd == "schedule" and "--live" in words:
                    cmd = "schedule --live"
            if words and words[0] in ("--help", "--version"):
                continue
            h = help_of(prog, cmd)
            for opt in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", rest):
                checked += 1
                if not re.search(re.escape(opt) + r"(?![a-z0-9-])", h):
                    print("%s: '%s %s' takes no %s (not in its --help): %s"
                          % (doc, prog, cmd, opt, line.strip()[:120]))
if checked < 50:
    print("only %d options of documented commands checked: the check did not read the documents" % checked)
PY
[ -s "$tmp/options" ] && fail "$(head -5 "$tmp/options")"

# Every source path a document quotes (`bench/optimizer`, `remote/live/hostdesk`) names what
# is there: a file or folder, a module by its stem (.c/.h), a benchmark or a built
# program by its name (bench/X.c, bench/X.sh, build/X); NAME is a placeholder. A renamed or
# moved file that a document still names fails here (the links above are only the [..](..) ones).
/usr/bin/python3 - "$root" >"$tmp/paths" <<'PY'
import os, re, sys
root = sys.argv[1]
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
checked = 0
for doc in docs:
    text = open(os.path.join(root, doc), encoding="utf-8").read()
    for quoted in re.findall(r"`([^`\n]+)`", text):  # a command's first word too
        p = quoted.split()[0].split(":")[0].rstrip(".,;") if quoted.strip() else ""
        if not re.match(r"(core|remote|tui|cmd|tools|bench|tests|examples|themes|data|debian|docs|mk)/[\w./-]+$", p):
            continue
        if "NAME" in p:
            continue
        checked += 1
        stem = p.rstrip("/")
        if not any(os.path.exists(os.path.join(root, c)) for c in
                   (p, stem + ".c", stem + ".h", stem + ".sh", "build/" + p)):
            print("%s: '%s' names no file or folder of the tree" % (doc, quoted))
if checked < 200:
    print("only %d quoted paths checked: the check did not read the documents" % checked)
PY
[ -s "$tmp/paths" ] && fail "$(head -5 "$tmp/paths")"

# The map's layer table names many files bare (`gp_fit.c` in the row of `core/opt`): each is
# a file under that row's folders, so a file renamed or moved out of its folder fails here as
# a quoted path does above.
/usr/bin/python3 - "$root" >"$tmp/mapfiles" <<'PY'
import os, re, sys
root = sys.argv[1]
checked = 0
for line in open(os.path.join(root, "docs/architecture.md"), encoding="utf-8"):
    row = re.match(r"\| \d+ \| (.*?) \| (.*) \|$", line)
    if not row:
        continue
    folders = re.findall(r"`([\w/]+)`", row.group(1))
    for name in re.findall(r"`([\w.-]+\.[ch])`", row.group(2)):
        checked += 1
        if not any(name in files for f in folders for _, _, files in os.walk(os.path.join(root, f))):
            print("docs/architecture.md: the row of %s names '%s', which is not under %s"
                  % (", ".join(folders), name, " or ".join(folders)))
if checked < 100:
    print("only %d file names of the layer table checked: the check did not read it" % checked)
PY
[ -s "$tmp/mapfiles" ] && fail "$(head -5 "$tmp/mapfiles")"

# Every command `tunedeck --help` lists is one README.md shows (`tunedeck CMD` or
# `build/tunedeck CMD`; the console is tunedeck with no command): a new command nobody can
# learn of from the README fails here.
"$bin" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/^commands:/ { print $1 }' >"$tmp/commands"
[ "$(wc -l <"$tmp/commands")" -ge 5 ] ||
    fail "only $(wc -l <"$tmp/commands") commands in tunedeck --help: the check did not read it"
while read -r c; do
    [ "$c" = console ] && continue
    grep -qE "(^|[ \`/])tunedeck $c( |\`|$)" "$root/README.md" ||
        fail "README.md shows no 'tunedeck $c' (a command tunedeck --help lists)"
done <"$tmp/commands"

# Every make target a document gives (`make X` in a code block or quoted in the prose) is one
# the Makefile has, and every target of the Makefile is in README.md or docs/*.md: a renamed
# target fails here, and so does a new one nobody can learn of (`make unit` was in no
# document). 'all' is plain `make`; 'san-tree' is make test's step, which testing.md
# describes as build-san/.
/usr/bin/python3 - "$root" >"$tmp/targets" <<'PY'
import os, re, sys
root = sys.argv[1]
mk = open(os.path.join(root, "Makefile"), encoding="utf-8").read()
targets = set(re.findall(r"^([a-z][a-z0-9-]*):", mk, re.M))
if len(targets) < 8:
    sys.exit("Makefile: only %d targets found: the check did not read it" % len(targets))
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
named = set()
for doc in docs:
    text = open(os.path.join(root, doc), encoding="utf-8").read()
    lines = [l for b in re.findall(r"^```(?:sh)?\n(.*?)^```", text, re.S | re.M) for l in b.splitlines()]
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    lines += re.findall(r"`([^`]*)`", prose)
    for line in lines:
        for m in re.finditer(r"(?:^|&&|;|\$ )\s*make((?: [^ #;&|]+)*)", line.strip()):
            for word in m.group(1).split():
                if "=" in word or word.startswith("-"):
                    continue
                named.add(word)
                if word not in targets:
                    print("%s: 'make %s': the Makefile has no target '%s'" % (doc, word, word))
for t in sorted(targets - named - {"all", "san-tree"}):
    print("the Makefile's target '%s' is in no document (README.md's list of targets)" % t)
PY
[ -s "$tmp/targets" ] && fail "$(head -3 "$tmp/targets")"

# Every environment variable the programs read is in the man page's ENVIRONMENT section.
sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$root/docs/man/tunedeck.1" >"$tmp/environment"
grep -rhoE 'getenv\("[A-Za-z_][A-Za-z0-9_]*"\)' "$root/cmd" "$root/core" "$root/remote" "$root/tui" \
    "$root/tools" --include='*.c' | sed 's/getenv("\(.*\)")/\1/' | sort -u >"$tmp/vars"
[ "$(wc -l <"$tmp/vars")" -ge 5 ] || fail "only $(wc -l <"$tmp/vars") getenv() calls found: the check did not read the sources"
while read -r v; do
    grep -qw -- "$v" "$tmp/environment" || fail "the programs read \$$v, which the man page's ENVIRONMENT does not name"
done <"$tmp/vars"

# The console's config.json actions (tui/config.c's ACTION_NAMES) are the ones README.md and
# the man page list for "keys" (a newcomer has no other place to learn their names).
/usr/bin/python3 - "$root" >"$tmp/actions" <<'PY'
import re, subprocess, sys
root = sys.argv[1]
src = open(root + "/tui/config.c", encoding="utf-8").read()
m = re.search(r"ACTION_NAMES\[ACT_COUNT\] = \{(.*?)\};", src, re.S)
names = re.findall(r'"([a-z-]+)"', m.group(1)) if m else []
if len(names) < 5:
    sys.exit("tui/config.c: no ACTION_NAMES found: the check did not read it")
readme = open(root + "/README.md", encoding="utf-8").read()
man = subprocess.run(["man", "-l", root + "/docs/man/tunedeck.1"], capture_output=True, text=True,
                     env={"MANWIDTH": "400", "PATH": "/usr/bin:/bin"}).stdout
for n in names:
    if "`%s`" % n not in readme:
        print("README.md does not list the config.json action '%s'" % n)
    if not re.search(r"\b%s\b" % re.escape(n), man.split("config.json", 1)[-1]):
        print("the man page does not list the config.json action '%s'" % n)
PY
[ -s "$tmp/actions" ] && fail "$(head -3 "$tmp/actions")"

[ $fails -eq 0 ]
