#!/usr/bin/env bash
# The one-way rule of docs/architecture.md, checked on every #include "..."
# under src/ and include/: a layer includes its own headers and those of
# the layers listed for it, never one above. Prints each include that
# breaks the rule and exits 1 if there is any. Run by make check.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

# layer: what its files may include (its own folder is always allowed).
# include/nstack (layer "nstack") is the public API: every layer may
# include it, and it includes nothing internal.
declare -A allowed=(
    [core]=""
    [dev]="core"
    [link]="core"
    [ipv4]="core link"
    [sctp]="core"
    [transport]="core sctp"
    [stack]="core link ipv4 sctp"
    [socket]="core sctp stack nstack"
    [tools]="core dev link ipv4 sctp transport stack socket nstack"
    [nstack]=""
)

bad=0
checked=0
while IFS= read -r file; do
    [ -f "$file" ] || continue
    case "$file" in
    include/nstack/*) layer=nstack ;;
    src/*/*) layer=${file#src/}; layer=${layer%%/*} ;;
    *) continue ;;
    esac
    if [ -z "${allowed[$layer]+x}" ]; then
        echo "$file: folder '$layer' is in no layer of scripts/check-layers.sh (add it there and to docs/architecture.md)"
        bad=1
        continue
    fi
    while IFS= read -r inc; do
        checked=$((checked + 1))
        target=${inc%%/*}
        [ "$target" = "$inc" ] && continue # same-folder include without a path
        [ "$target" = "$layer" ] && continue
        [ "$target" = nstack ] && continue
        case " ${allowed[$layer]} " in
        *" $target "*) ;;
        *)
            echo "$file: includes \"$inc\": $layer may include only: $layer ${allowed[$layer]}"
            bad=1
            ;;
        esac
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(git ls-files -co --exclude-standard -- 'src/*.c' 'src/*.h' 'include/*.h' 2>/dev/null ||
    find src include -name '*.[ch]')

if [ $bad -ne 0 ]; then
    echo "layers: includes that point up the layer order (docs/architecture.md)"
    exit 1
fi
echo "layers: $checked includes, all one way"
