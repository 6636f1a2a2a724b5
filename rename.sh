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

# The deduplication family moved to package dedup
# (github.com/lasergo/laser/dedup), which runtime imports:
#   runtime.Deduplicator, BatchDeduplicator, Completer, Forgetter, KeyState,
#   KeyClaimed, KeyDuplicate, KeyHeld, KeyBusy, SlidingWindow,
#   NewSlidingWindow -> dedup.<same name>
#   runtime.DedupKey -> dedup.Key
#   runtime.DefaultDedupWindow -> dedup.DefaultWindow
dedupnames='Deduplicator|BatchDeduplicator|Completer|Forgetter|KeyState|KeyClaimed|KeyDuplicate|KeyHeld|KeyBusy|SlidingWindow|NewSlidingWindow'
perl -pi -e '
	s/\bruntime\.('"$dedupnames"')\b/dedup.$1/g;
	s/\bruntime\.DedupKey\b/dedup.Key/g;
	s/\bruntime\.DefaultDedupWindow\b/dedup.DefaultWindow/g;
' $files
# Inside package runtime the names were unqualified: qualify them in code
# (not in comments, nor as a field name or a composite literal's key).
perl -pi -e '
	next if m{^\s*//};
	s/(?<![\w.])(?<!\t)('"$dedupnames"')\b(?!: )/dedup.$1/g;
	s/(?<![\w.])DedupKey\(/dedup.Key(/g;
	s/(?<![\w.])DefaultDedupWindow\b/dedup.DefaultWindow/g;
	s/(?<![\w.])maxDedupWindow\b/dedup.MaxWindow/g;
' $(git ls-files 'runtime/*.go' | grep -v '_test\.go$') $(grep -l '^package runtime$' $(git ls-files 'runtime/*_test.go'))

# The time and id sources moved to package clock
# (github.com/lasergo/laser/clock):
#   runtime.Clock -> clock.Clock, runtime.SystemClock -> clock.System,
#   runtime.IDSource -> clock.IDSource, runtime.ULIDSource -> clock.ULIDSource
perl -pi -e '
	s/\bruntime\.(Clock|IDSource|ULIDSource)\b/clock.$1/g;
	s/\bruntime\.SystemClock\b/clock.System/g;
' $files
perl -pi -e '
	next if m{^\s*//};
	s/(?<![\w.])(?<!\t)(Clock|IDSource|ULIDSource)\b(?!: |\()/clock.$1/g;
	s/(?<![\w.])SystemClock\b/clock.System/g;
' $(git ls-files 'runtime/*.go' | grep -v '_test\.go$') $(grep -l '^package runtime$' $(git ls-files 'runtime/*_test.go'))

# What an effect gate sees moved to package effect
# (github.com/lasergo/laser/effect); EffectGate and EffectOutcome stay in
# runtime, since they take the *runtime.Client:
#   runtime.Effect -> effect.Effect, runtime.EffectKind -> effect.Kind,
#   runtime.Claims -> effect.Claims,
#   runtime.Effect<Kind> (EffectCommand, EffectPublish, ...) -> effect.<Kind>
effectkinds='Command|Request|Event|Response|Error|Status|Chunk|Plain|Publish|MemoryWrite|WorkflowStep|FanoutBranch|BridgeCall'
perl -pi -e '
	s/\bruntime\.EffectKind\b/effect.Kind/g;
	s/\bruntime\.Effect('"$effectkinds"')\b/effect.$1/g;
	s/\bruntime\.(Effect|Claims)\b/effect.$1/g;
	s/\brt\("Claims"\)/jen.Qual(effectPath, "Claims")/g;
' $files
perl -pi -e '
	next if m{^\s*//};
	s/(?<![\w.])EffectKind\b/effect.Kind/g;
	s/(?<![\w.])Effect('"$effectkinds"')\b/effect.$1/g;
	s/(?<![\w.])(?<!\t)(Effect|Claims)\b(?!: |\()/effect.$1/g;
' $(git ls-files 'runtime/*.go' | grep -v '_test\.go$') $(grep -l '^package runtime$' $(git ls-files 'runtime/*_test.go'))

# The description of a generated agent's operations moved to package
# operation (github.com/lasergo/laser/operation):
#   runtime.OperationInfo -> operation.Info, runtime.OperationKind ->
#   operation.Kind, runtime.Operation{Request,Command,Event,Stream} ->
#   operation.{Request,Command,Event,Stream}; a struct embedding it names
#   the field Info.
perl -pi -e '
	s/\bruntime\.OperationInfo\b/operation.Info/g;
	s/\bruntime\.OperationKind\b/operation.Kind/g;
	s/\bruntime\.Operation(Request|Command|Event|Stream)\b/operation.$1/g;
' $files

# A Go file that now uses package dedup, clock, effect or operation imports it (beside its
# other imports of this module), and one that no longer uses package
# runtime drops its import.
for f in $(git ls-files '*.go'); do
	[ -f "$f" ] || continue
	for pkg in dedup clock effect operation; do
		case "$f" in "$pkg"/*) continue ;; esac
		case $pkg in
		dedup) names="$dedupnames|Key|DefaultWindow|MaxWindow|Hash" ;;
		clock) names='Clock|System|IDSource|ULIDSource' ;;
		effect) names="Effect|Kind|Claims|$effectkinds" ;;
		operation) names='Info|Kind|Request|Command|Event|Stream' ;;
		esac
		if grep -v '^\s*//' "$f" | grep -qP "(?<![\\w.])$pkg\\.($names)\\b" && ! grep -q "\"github.com/lasergo/laser/$pkg\"" "$f"; then
			PKG=$pkg perl -0pi -e '
				my $imp = "\t\"github.com/lasergo/laser/$ENV{PKG}\"";
				s{^(import \((?:\n(?!\t"github\.com/lasergo/laser/)[^\n]*)*?)(\n\t"github\.com/lasergo/laser/)}{$1\n$imp$2}m
					or s{^(import \((?:\n[^\n)]*)*?)\n\)}{$1\n\n$imp\n)}m
					or s{^import ("[^"\n]+")\n}{import (\n\t$1\n\n$imp\n)\n}m;
			' "$f"
			gofmt -w "$f"
		fi
	done
	if grep -q '^\s*"github.com/lasergo/laser/runtime"$' "$f" && ! grep -v '^\s*//' "$f" | grep -q '\bruntime\.[A-Z]'; then
		perl -ni -e 'print unless /^\s*"github.com\/lasergo\/laser\/runtime"$/' "$f"
		gofmt -w "$f"
	fi
done
