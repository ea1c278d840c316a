#!/bin/sh
# Fake kubectl for the mpigen end-to-end harness: the only stand-in in it.
#
# Implements just what the rendered pods call:
#   kubectl exec [-i|--stdin] [-c NAME] [pod/]POD -- CMD...   run CMD in POD's namespaces (clean env of
#       the pod's container); stdin is attached only with -i, as with the real one; exit code
#       propagated, with the real one's "command terminated with exit code N" on stderr.
#   kubectl get pods (-l|--selector) K=V[,K=V...] [--field-selector=status.phase=Running] -o name
#       `pod/NAME` of every running pod whose labels have each K=V (equality terms only), in name
#       order; nothing (exit 0) when none matches, as the real one prints "No resources found" on
#       stderr.
#   kubectl get pod[s] POD -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
#       prints the pod's Ready condition as the test scripted it (True, False, empty), no newline.
#   kubectl get pod[s] POD... [--no-headers] -o custom-columns=NAME:.metadata.name,READY:<that field>
#       one row per pod found (`<none>` for an empty condition), NotFound errors for the others.
# Each get consumes one scripted value per named pod (see Cluster.script_ready); the last one stays.
# A pod that does not exist fails like the real one: `Error from server (NotFound): pods "NAME" not
# found`, exit 1. State lives in the harness's state dir, written into this file on delivery.
STATE=@STATE@
READY_FIELD='.status.conditions[?(@.type=="Ready")].status'
READY_JSONPATH="{$READY_FIELD}"
NL='
'

not_found() {
    echo "Error from server (NotFound): pods \"$1\" not found" >&2
    exit 1
}

usage() {
    echo "error: $* (fake kubectl of the mpigen e2e harness)" >&2
    exit 1
}

kubectl_exec() {
    stdin=
    pod=
    while [ $# -gt 0 ]; do
        case "$1" in
            --) shift; break ;;
            -i|--stdin) stdin=1 ;;
            -c|--container) shift ;;
            --container=*|-c=*) ;;
            -*) usage "exec: unsupported flag $1" ;;
            *) [ -n "$pod" ] && usage "exec: more than one pod" ; pod=${1#pod/}; pod=${pod#pods/} ;;
        esac
        shift
    done
    [ -n "$pod" ] || usage "exec: expected POD -- COMMAND"
    [ $# -gt 0 ] || usage "you must specify at least one command for the container"
    [ -x "$STATE/pods/$pod/enter" ] || not_found "$pod"
    if [ -n "$stdin" ]; then
        "$STATE/pods/$pod/enter" "$@"
    else
        "$STATE/pods/$pod/enter" "$@" </dev/null
    fi
    rc=$?
    [ $rc -eq 0 ] || echo "command terminated with exit code $rc" >&2
    exit $rc
}

# Pops the next scripted Ready value; the last one stays. "NotFound" scripts a missing pod.
next_ready() {
    file=$STATE/pods/$1/ready
    [ -f "$file" ] || return 1
    flock "$file" sh -c '
        value=$(head -n 1 "$1")
        if [ "$(wc -l <"$1")" -gt 1 ]; then
            tail -n +2 "$1" >"$1.next" && mv "$1.next" "$1"
        fi
        printf "%s" "$value"' sh "$file"
}

kubectl_get() {
    kind=$1
    case "$kind" in pod|pods|po) ;; *) usage "get: only pods are supported, got ${kind:-nothing}" ;; esac
    shift
    pods=
    output=
    headers=1
    selector=
    while [ $# -gt 0 ]; do
        case "$1" in
            -o|--output) shift; output=${1-} ;;
            -o=*|--output=*) output=${1#*=} ;;
            -o*) output=${1#-o} ;;
            --no-headers|--no-headers=true) headers= ;;
            -l|--selector) shift; selector=${1-} ;;
            --selector=*) selector=${1#*=} ;;
            --field-selector=status.phase=Running) ;;  # every started pod runs
            -*) usage "get: unsupported flag $1" ;;
            *) pods="$pods $1" ;;
        esac
        shift
    done
    if [ -n "$selector" ]; then
        [ -z "$pods" ] || usage "get: pod names and a selector together"
        [ "$output" = name ] || usage "get: with a selector only -o name is supported"
        select_pods "$selector"
        exit 0
    fi
    [ -n "$pods" ] || usage "get: expected pod names"
    case "$output" in
        "jsonpath=$READY_JSONPATH")
            set -- $pods
            [ $# -eq 1 ] || usage "get: jsonpath output is supported for one pod only"
            value=$(next_ready "$1") || not_found "$1"
            [ "$value" = NotFound ] && not_found "$1"
            printf "%s" "$value" ;;
        "custom-columns=NAME:.metadata.name,READY:$READY_FIELD")
            ready_table "$headers" $pods ;;
        *) usage "get: only -o jsonpath=$READY_JSONPATH or" \
                 "-o custom-columns=NAME:.metadata.name,READY:$READY_FIELD" ;;
    esac
}

# select_pods K=V[,K=V...]: `pod/NAME` for each started pod whose labels file has every K=V line.
select_pods() {
    case "$1" in *!*|*" in "*|*"notin"*|*"=="*) usage "get: only K=V selector terms are supported" ;; esac
    found=
    for dir in "$STATE"/pods/*/; do
        pod=$(basename "$dir")
        [ -x "$dir/enter" ] && [ -f "$dir/labels" ] || continue
        match=1
        old_ifs=$IFS
        IFS=,
        for term in $1; do
            case "$term" in *=*) ;; *) IFS=$old_ifs; usage "get: selector term without =: $term" ;; esac
            grep -qxF -- "$term" "$dir/labels" || match=
        done
        IFS=$old_ifs
        [ -n "$match" ] && found="$found pod/$pod"
    done
    [ -n "$found" ] || { echo "No resources found in default namespace." >&2; return 0; }
    for pod in $found; do echo "$pod"; done
}

# ready_table HEADERS POD...: the table kubectl prints (columns padded by 3), then one NotFound error
# per missing pod on stderr and exit 1 if any was missing, as kubectl does for several names.
ready_table() {
    headers=$1
    shift
    rows=
    missing=
    width=4
    for pod in "$@"; do
        if value=$(next_ready "$pod") && [ "$value" != NotFound ]; then
            rows="$rows$pod ${value:-<none>}$NL"
            [ ${#pod} -gt $width ] && width=${#pod}
        else
            missing="$missing $pod"
        fi
    done
    fmt="%-${width}s   %s\n"
    if [ -n "$rows" ]; then
        [ -n "$headers" ] && printf "$fmt" NAME READY
        printf "%s" "$rows" | while read -r pod value; do printf "$fmt" "$pod" "$value"; done
    fi
    [ -z "$missing" ] && exit 0
    for pod in $missing; do
        echo "Error from server (NotFound): pods \"$pod\" not found" >&2
    done
    exit 1
}

case "$1" in
    exec) shift; kubectl_exec "$@" ;;
    get) shift; kubectl_get "$@" ;;
    *) usage "unsupported command: ${1:-<none>}" ;;
esac
