#!/bin/sh
# The documents a newcomer reads hold together: every relative link in README.md and
# docs/*.md names a file that exists and, with a #fragment, a heading of that file (GitHub's
# anchor for it); the README's text screenshot is docs/screenshot.txt, which docs/console.md
# says it is. Whether the screenshot still matches the console is console.sh's and the
# walkthrough's; this only keeps the two copies one.
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
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

[ $fails -eq 0 ]
