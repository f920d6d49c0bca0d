# bash completion for tunedeck: commands, options, optimizer/launcher/policy/theme names,
# session ids for --resume and files for file options. Option and name lists come from the
# installed tunedeck's own --help, so they cannot fall behind it.
# Installed as share/bash-completion/completions/tunedeck; or: . tools/completion/tunedeck.bash

# The words after "NAME" in a --help line ("  --optimizer NAME   a, b, c (default x)").
_tunedeck_names()
{
    "$1" tune --help 2>/dev/null |
        sed -n "s/^ *$2 NAME *\(how trials run: \)\{0,1\}//p" | sed 's/(.*//; s/,/ /g'
}

_tunedeck()
{
    local cur prev bin cmd i
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD - 1]}"
    bin="${COMP_WORDS[0]}"
    COMPREPLY=()

    # The commands main's --help lists; the command is the first of them on the line.
    local commands
    commands=" $(echo $("$bin" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p')) "
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ "${COMP_WORDS[i]}" != -* && "$commands" == *" ${COMP_WORDS[i]} "* ]]; then
            cmd="${COMP_WORDS[i]}"
            break
        fi
    done

    case "$prev" in
    --cluster | --job | --workload | --events | --stdin | --checkpoint)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    --job-dir | --data)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -d -- "$cur"))
        return ;;
    --resume)
        COMPREPLY=($(compgen -W "$("$bin" sessions 2>/dev/null | awk 'NR > 1 { print $1 }')" -- "$cur"))
        return ;;
    --optimizer | --launcher)
        COMPREPLY=($(compgen -W "$(_tunedeck_names "$bin" "$prev")" -- "$cur"))
        return ;;
    --policy)
        COMPREPLY=($(compgen -W "$("$bin" schedule --help 2>/dev/null |
            sed -n 's/^policies: //p' | sed 's/(also: //; s/[,)]//g')" -- "$cur"))
        return ;;
    --theme)
        local home
        home="$("$bin" --help 2>/dev/null | sed -n 's/^data, themes, examples: \(.*\) (TUNEDECK_HOME.*/\1/p')"
        COMPREPLY=($(compgen -W "$(cd "$home/themes" 2>/dev/null && ls -- *.json 2>/dev/null |
            sed 's/\.json$//')" -- "$cur"))
        return ;;
    --plot)
        COMPREPLY=($(compgen -W "braille block ascii" -- "$cur"))
        return ;;
    --sim)
        local s n words=""
        # the fixed settings (G<n> takes any n); every network runs on every one of them
        for s in A B C M1 M2 M3; do
            for n in googlenet alexnet speechnet resnet50; do words="$words $s:$n"; done
        done
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
        return ;;
    --budget | --seed | --trial-timeout | --trial-cmd | --pace-ms | --sched-jobs | \
        --sched-speed | --nodes | --gpus-per-node | --interval | --resize-cost | \
        --arrival-mean | --jobs | --model | --pin | --drain | --hold | --gpu-wait | --time-scale | \
        --duration | --checkpoint-file | --status-every | --partition | --login | --watch-for | \
        --job-command | \
        --max-interval)
        return ;; # a value only the operator knows
    esac

    if [ -z "$cmd" ] && [[ "$cur" != -* ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    local help=("$bin" "${cmd:-console}")
    [ "$cmd" = schedule ] && [[ " ${COMP_WORDS[*]} " == *" --live "* ]] && help+=(--live)
    local opts
    opts="$("${help[@]}" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)"
    [ -z "$cmd" ] && opts="$opts --version --help"
    COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
}

complete -F _tunedeck tunedeck
