# fish completion for antidrift, the antidriftd command-line client.
# Install: copy to ~/.config/fish/completions/antidrift.fish (or
# /usr/share/fish/vendor_completions.d/).

set -l commands plan cancel-plan tasks start status complete abandon extend end refocus allow enforce break-glass review history report verify forget-key hook help
set -l levels observe warn block locked

# No file names anywhere.
complete -c antidrift -f

# Subcommands, offered until one is given.
set -l none "not __fish_seen_subcommand_from $commands"
complete -c antidrift -n $none -a plan -d 'Start planning: nothing is committed yet'
complete -c antidrift -n $none -a cancel-plan -d 'Leave planning without starting'
complete -c antidrift -n $none -a tasks -d 'List the open tasks of the configured task sources'
complete -c antidrift -n $none -a start -d 'Commit to one next action for a timebox'
complete -c antidrift -n $none -a status -d 'Show the session'
complete -c antidrift -n $none -a complete -d 'The success condition is met: go to review'
complete -c antidrift -n $none -a abandon -d 'Give the session up: go to review'
complete -c antidrift -n $none -a extend -d 'Add time to the session'
complete -c antidrift -n $none -a end -d 'Seal the reviewed session into the audit log'
complete -c antidrift -n $none -a refocus -d 'Acknowledge drift: back to the next action'
complete -c antidrift -n $none -a allow -d 'Count a window class (or CLASS:TITLE-GLOB) as on task'
complete -c antidrift -n $none -a enforce -d 'Set the enforcement level'
complete -c antidrift -n $none -a break-glass -d 'At level locked: start the hold before abandon'
complete -c antidrift -n $none -a review -d 'In review: the rule changes the session proposes'
complete -c antidrift -n $none -a history -d 'List sealed sessions, newest first'
complete -c antidrift -n $none -a report -d 'See the week as text, JSON or an HTML page'
complete -c antidrift -n $none -a verify -d 'Check the audit log hash chain'
complete -c antidrift -n $none -a forget-key -d 'Re-pair a reinstalled machine (forget its pinned key)'
complete -c antidrift -n $none -a hook -d 'The Taskwarrior on-modify hook'
complete -c antidrift -n $none -a help -d 'Show help'
complete -c antidrift -n $none -l version -d 'Show the version'

# Flags every subcommand takes.
complete -c antidrift -l json -d 'Print parseable JSON on stdout'
complete -c antidrift -l help -d 'Show help'

# start
complete -c antidrift -n '__fish_seen_subcommand_from start' -l task -x -d 'Start from a task: taskwarrior:42, caldav:UID'
complete -c antidrift -n '__fish_seen_subcommand_from start' -l done-when -x -d 'How you will know it is done'
complete -c antidrift -n '__fish_seen_subcommand_from start' -l for -x -a '15m 25m 30m 45m 50m 1h 90m' -d 'The timebox'
complete -c antidrift -n '__fish_seen_subcommand_from start' -l allow -x -d 'A window class (or CLASS:TITLE-GLOB) that counts as on task'
complete -c antidrift -n '__fish_seen_subcommand_from start' -l enforce -x -a "$levels" -d 'The enforcement level'
complete -c antidrift -n '__fish_seen_subcommand_from start' -l quiet -d 'Do Not Disturb while the session is active'
complete -c antidrift -n '__fish_seen_subcommand_from start' -l no-quiet -d "Leave other apps' notifications alone"
complete -c antidrift -n '__fish_seen_subcommand_from start' -l from-plan -d "Start with the coach's proposal; flags change its fields"
# plan
complete -c antidrift -n '__fish_seen_subcommand_from plan' -l coach -x -d 'Ask the model to turn INTENTION into a proposal'
complete -c antidrift -n '__fish_seen_subcommand_from plan' -l task -x -d 'The task REF the intention is for'

# complete, hook
complete -c antidrift -n '__fish_seen_subcommand_from complete' -l keep-task -d "Leave the session's task open in its source"
complete -c antidrift -n '__fish_seen_subcommand_from hook' -a taskwarrior -d 'Taskwarrior on-modify'
complete -c antidrift -n '__fish_seen_subcommand_from hook' -l for -x -a '15m 25m 30m 45m 50m 1h 90m' -d 'The timebox of a session task N start starts'

# status
complete -c antidrift -n '__fish_seen_subcommand_from status' -l follow -d 'Print a line on every change until interrupted'
complete -c antidrift -n '__fish_seen_subcommand_from status' -l wait-change -r -d 'Print the status as JSON once it differs from DIGEST, then exit'
complete -c antidrift -n '__fish_seen_subcommand_from status' -l format -x -a 'text json waybar polybar' -d 'Output format'

# positional arguments
complete -c antidrift -n '__fish_seen_subcommand_from enforce' -a "$levels" -d 'Enforcement level'
complete -c antidrift -n '__fish_seen_subcommand_from extend' -a '5m 10m 15m 25m 30m 1h' -d 'Duration'
complete -c antidrift -n '__fish_seen_subcommand_from help' -a "$commands"

# review
complete -c antidrift -n '__fish_seen_subcommand_from review' -l apply -x -d 'Apply proposal N to the rules file'

# history
complete -c antidrift -n '__fish_seen_subcommand_from history' -l limit -x -d 'Show at most N sessions'

# report
complete -c antidrift -n '__fish_seen_subcommand_from report' -l today -d 'Report on today'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l week -d 'The last 7 days (default)'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l month -d 'The last 30 days'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l since -x -d 'From DATE (YYYY-MM-DD)'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l until -x -d 'Through DATE, with --since'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l html -r -F -d 'Write an HTML page (- for stdout)'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l open -d 'Open the HTML page with xdg-open'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l state-dir -r -a '(__fish_complete_directories)' -d 'Read this state directory'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l config -r -F -d 'Take the privacy settings from this file'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l daemon -d 'Ask the running daemon'
# forget-key
complete -c antidrift -n '__fish_seen_subcommand_from forget-key' -l state-dir -r -a '(__fish_complete_directories)' -d "The daemon's state directory"

# verify
complete -c antidrift -n '__fish_seen_subcommand_from verify' -l journal -d 'Also check the heads the journal recorded'
complete -c antidrift -n '__fish_seen_subcommand_from verify' -l state-dir -r -a '(__fish_complete_directories)' -d "The daemon's state directory"
complete -c antidrift -n '__fish_seen_subcommand_from history' -l state-dir -r -a '(__fish_complete_directories)' -d "The daemon's state directory"
# --device, --this-device (with sync_dir)
complete -c antidrift -n '__fish_seen_subcommand_from history' -l device -x -d 'Only the machine NAME (sync_dir)'
complete -c antidrift -n '__fish_seen_subcommand_from history' -l this-device -d 'This machine alone (sync_dir)'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l device -x -d 'Only the machine NAME (sync_dir)'
complete -c antidrift -n '__fish_seen_subcommand_from report' -l this-device -d 'This machine alone (sync_dir)'
complete -c antidrift -n '__fish_seen_subcommand_from verify' -l device -x -d 'Only the machine NAME (sync_dir)'
complete -c antidrift -n '__fish_seen_subcommand_from verify' -l this-device -d 'This machine alone (sync_dir)'
