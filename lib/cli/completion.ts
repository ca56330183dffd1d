// `cairn completion bash|zsh`: a shell completion script. The command names come from main.ts's
// command table (handed in by main.ts, so this module does not import it back); a command's
// sub-commands and options are read from its own --help text when the shell asks (the text
// docs/cli.md is generated from), so neither can drift from the code.
import { CliUsageError } from './args.js';

export const COMPLETION_HELP = `Usage: cairn completion bash|zsh

Print a completion script for the shell: command names, then each command's sub-commands and
options (taken from its --help), then file names.

  bash:  source <(cairn completion bash)        (or add that line to ~/.bashrc)
  zsh:   source <(cairn completion zsh)         (or add that line to ~/.zshrc, after compinit)
`;

/** The shell snippets shared by both scripts: a command's sub-commands and options from its help. */
const SUBS = (cmd: string) => `cairn ${cmd} --help 2>/dev/null | grep -oE "cairn ${cmd} [a-z][a-z-]+" | awk '{print $3}' | sort -u`;
const FLAGS = (cmd: string, sub: string) => `{ cairn ${cmd} --help; [ -n "${sub}" ] && cairn ${cmd} ${sub} --help; } 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u`;

export function bashScript(commands: readonly string[]): string {
  return `# bash completion for cairn (cairn completion bash)
_cairn() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]} sub=""
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ] || { [ "$COMP_CWORD" -eq 2 ] && [ "$cmd" = help ]; }; then
    COMPREPLY=($(compgen -W "help ${commands.join(' ')}" -- "$cur"))
    return 0
  fi
  if [ "$cmd" = completion ]; then COMPREPLY=($(compgen -W "bash zsh" -- "$cur")); return 0; fi
  [ "$COMP_CWORD" -gt 2 ] && case \${COMP_WORDS[2]} in -*) ;; *) sub=\${COMP_WORDS[2]} ;; esac
  case "$cur" in
    -*) COMPREPLY=($(compgen -W "$(${FLAGS('"$cmd"', '$sub')})" -- "$cur")) ;;
    *)
      if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "$(${SUBS('"$cmd"')})" -- "$cur")); fi
      [ \${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
      ;;
  esac
  return 0
}
complete -o filenames -F _cairn cairn
`;
}

export function zshScript(commands: readonly string[]): string {
  return `#compdef cairn
# zsh completion for cairn (cairn completion zsh)
_cairn() {
  local cmd=\${words[2]} sub=""
  if (( CURRENT == 2 )) || { (( CURRENT == 3 )) && [[ $cmd == help ]]; }; then
    compadd -- help ${commands.join(' ')}
    return
  fi
  if [[ $cmd == completion ]]; then compadd -- bash zsh; return; fi
  (( CURRENT > 3 )) && [[ \${words[3]} != -* ]] && sub=\${words[3]}
  if [[ \${words[CURRENT]} == -* ]]; then
    compadd -- \${(f)"$(${FLAGS('"$cmd"', '$sub')})"}
  elif (( CURRENT == 3 )); then
    local -a subs
    subs=(\${(f)"$(${SUBS('"$cmd"')})"})
    if (( \${#subs} )); then compadd -- $subs; else _files; fi
  else
    _files
  fi
}
if [[ \${funcstack[1]} == _cairn ]]; then _cairn "$@"; else compdef _cairn cairn; fi
`;
}

export async function completionCommand(argv: string[], commands: readonly string[]): Promise<number> {
  const [shell, ...rest] = argv;
  if (shell === '--help' || shell === '-h') { process.stdout.write(COMPLETION_HELP); return 0; }
  if (rest.length || (shell !== 'bash' && shell !== 'zsh')) throw new CliUsageError('usage: cairn completion bash|zsh (see cairn completion --help)');
  process.stdout.write(shell === 'bash' ? bashScript(commands) : zshScript(commands));
  return 0;
}
