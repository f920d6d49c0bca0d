#!/bin/sh
# make deb: the Debian package from an existing build, with Debian's own tools and no
# rebuild — make install into a staging tree, the documentation Debian policy asks for,
# dpkg-shlibdeps for Depends (the packages of every shared library the programs link:
# ncurses, libssh, GSL, OpenBLAS, cJSON, libc), dpkg-gencontrol for the control file from
# debian/control and debian/changelog, dpkg-deb to build. Arguments: the absolute build
# folder, the folder the .deb goes to. Prints the .deb's path.
set -eu
build="$1"
out="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tunedeck-deb.XXXXXX")"
trap 'rm -rf "$work"' EXIT INT TERM
stage="$work/stage"

make -s -C "$root" BUILD="$build" install DESTDIR="$stage" PREFIX=/usr >/dev/null
# Debian policy: stripped programs (the debug info stays in the build tree), compressed
# man pages, the copyright and the changelog under /usr/share/doc.
for p in "$stage"/usr/bin/*; do
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$p"
done
gzip -9n "$stage"/usr/share/man/man1/*.1
doc="$stage/usr/share/doc/tunedeck"
install -d "$doc"
install -m 644 "$root/debian/copyright" "$doc/copyright"
gzip -9nc "$root/debian/changelog" >"$doc/changelog.gz"
chmod 644 "$doc/changelog.gz"

# The tools read debian/ from the current folder; they write only into $work.
cd "$root"
# (dpkg-shlibdeps warns that the programs are not under debian/tunedeck, where dh would
# stage them: the staging tree is in $work so the source tree stays clean.)
dpkg-shlibdeps -T"$work/substvars" "$stage"/usr/bin/* 2>"$work/shlibdeps.err" ||
    { cat "$work/shlibdeps.err" >&2; exit 1; }
grep -v "should already be installed in their package's directory" "$work/shlibdeps.err" >&2 || true
mkdir -p "$stage/DEBIAN"
dpkg-gencontrol -ptunedeck -P"$stage" -T"$work/substvars" -f"$work/files" -Vmisc:Depends=
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
chmod 644 "$stage/DEBIAN/md5sums"
mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" >"$work/built"
sed -n "s/^dpkg-deb: building package 'tunedeck' in '\(.*\)'\.$/\1/p" "$work/built"
