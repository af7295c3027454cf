# bash completion for gexec (installed as share/bash-completion/completions/gexec).
_gexec() {
  local cur prev sub i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  sub=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in run|check|validate|kernels) sub=${COMP_WORDS[i]}; break ;; esac
  done
  case $prev in
    --backend) COMPREPLY=($(compgen -W "auto cuda cpu" -- "$cur")); return ;;
    --verify) COMPREPLY=($(compgen -W "auto full sample exact none" -- "$cur")); return ;;
    --precision) COMPREPLY=($(compgen -W "f32 tf32" -- "$cur")); return ;;
    --passes) COMPREPLY=($(compgen -W "default none canonicalize dead_ops fold_constant_casts fuse_elementwise" -- "$cur")); return ;;
    --print-after) COMPREPLY=($(compgen -W "canonicalize dead_ops fold_constant_casts fuse_elementwise" -- "$cur")); return ;;
    --arch) COMPREPLY=($(compgen -W "sm_80 sm_86 sm_89 sm_90 sm_100 sm_120" -- "$cur")); return ;;
    --dump|--load-inputs|--inputs|--outputs) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --report|--emit-graph|--tuning-cache) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --seed|--device|--atol|--rtol|--samples|--verify-budget|--iters|--warmup|--warmup-ms|--autotune-top|--peak-tflops) return ;;
  esac
  case $sub in
    "") COMPREPLY=($(compgen -W "run check validate kernels --version --help -v -q" -- "$cur")) ;;
    run)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--seed --dry-run --arch --device --backend --atol --rtol --passes --print-after-all
          --print-after --emit-graph --dump --verify --verify-budget --samples --report --load-inputs --iters --warmup --warmup-ms
          --cuda-graph --no-cuda-graph --profile --autotune --autotune-top --tuning-cache --peak-tflops --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
      fi ;;
    check)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--inputs --outputs --verify --verify-budget --backend --device --samples --seed --atol --rtol
          --precision --report --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
      fi ;;
    validate) COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur")) ;;
    kernels) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
  esac
}
complete -F _gexec gexec
