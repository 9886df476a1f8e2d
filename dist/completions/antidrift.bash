# bash completion for antidrift, the antidriftd command-line client.
# Install: copy to /usr/share/bash-completion/completions/antidrift (or
# ~/.local/share/bash-completion/completions/antidrift), or source it.

_antidrift() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()

    local commands="plan cancel-plan tasks start status complete abandon extend end refocus allow enforce break-glass review history report verify forget-key hook help"
    local levels="observe warn block locked"
    local formats="text json waybar polybar"
    local durations="15m 25m 30m 45m 50m 1h 90m"

    # The subcommand is the first word that is not a flag (a leading --json
    # is allowed: antidrift --json status).
    local cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -*) ;;
            *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done

    # Values of flags that take one.
    case $prev in
        --enforce) COMPREPLY=($(compgen -W "$levels" -- "$cur")); return ;;
        --format)  COMPREPLY=($(compgen -W "$formats" -- "$cur")); return ;;
        --for)     COMPREPLY=($(compgen -W "$durations" -- "$cur")); return ;;
        --done-when|--allow|--apply|--limit|--since|--until|--device|--task) return ;;
        --html|--state-dir|--config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac

    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version --json" -- "$cur"))
        return
    fi

    local flags="--json --help"
    case $cmd in
        plan)    flags+=" --coach --task" ;;
        start)   flags+=" --task --done-when --for --allow --enforce --quiet --no-quiet --from-plan" ;;
        complete) flags+=" --keep-task" ;;
        hook)    [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "taskwarrior" -- "$cur")); return; }; flags+=" --for" ;;
        status)  flags+=" --follow --format --wait-change" ;;
        review)  flags+=" --apply" ;;
        history) flags+=" --limit --device --this-device --state-dir" ;;
        report)  flags+=" --today --week --month --since --until --html --open --state-dir --config --device --this-device --daemon" ;;
        verify)  flags+=" --journal --state-dir --device --this-device" ;;
        forget-key) flags+=" --state-dir" ;;
        enforce) [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "$levels" -- "$cur")); return; } ;;
        extend)  [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "5m 10m 15m 25m 30m 1h" -- "$cur")); return; } ;;
        help)    COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    fi
}
complete -F _antidrift antidrift
