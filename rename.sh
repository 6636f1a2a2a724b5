#!/bin/sh
# rename.sh applies the renames of issue 25's smaller runtime surface (see
# CHANGELOG.md, "Smaller runtime surface") to every .go and .md file of the
# repository but the CHANGELOG. It is idempotent: a second run changes
# nothing, so it can be run again after merging a branch that added uses of
# the old names.
set -eu
cd "$(dirname "$0")"
files=$(git ls-files '*.go' '*.md' | grep -v '^CHANGELOG.md$')

# Free helpers that took a *Ctx or *Message first became methods.
#   runtime.EmitValue(c, ...)    -> c.EmitValue(...)
#   runtime.RespondValue(c, ...) -> c.RespondValue(...)
#   runtime.DecodeBody(m, ...)   -> m.Decode(...)
# The first argument is an identifier, a selector or a call without
# arguments (c, r.Message, c.Message()). Inside package runtime the calls
# have no qualifier.
perl -pi -e '
	s/\bruntime\.EmitValue\(([\w.]+(?:\(\))?), /$1.EmitValue(/g;
	s/\bruntime\.RespondValue\(([\w.]+(?:\(\))?), /$1.RespondValue(/g;
	s/\bruntime\.DecodeBody\(([\w.]+(?:\(\))?), /$1.Decode(/g;
	s/`runtime\.(EmitValue|RespondValue)`/`Ctx.$1`/g;
	s/`runtime\.DecodeBody`/`Message.Decode`/g;
' $files
perl -pi -e '
	s/(?<![\w.])(?<!\) )EmitValue\(([\w.]+(?:\(\))?), /$1.EmitValue(/g;
	s/(?<![\w.])(?<!\) )RespondValue\(([\w.]+(?:\(\))?), /$1.RespondValue(/g;
	s/(?<![\w.])(?<!\) )DecodeBody\(([\w.]+(?:\(\))?), /$1.Decode(/g;
' $(git ls-files 'runtime/*.go')
