# bash completion for clsort(1)
#
# Install: copy to /usr/share/bash-completion/completions/clsort (or
# /etc/bash_completion.d/), or source it from ~/.bashrc.  It needs nothing
# but bash itself.

_clsort_devices()
{
	# auto, gpu, cpu, all, and what clsort -L lists: host and the P:D of each
	# device.
	printf '%s\n' auto gpu cpu all
	"${1:-clsort}" -L 2>/dev/null | awk '{ print $1 }'
}

_clsort()
{
	local line=${COMP_LINE:0:COMP_POINT} cur prev opt val word
	local -a tokens replies
	local opts='-k --key-type= -K --sort-key= -f --format= -R --record-size= --key-offset=
		-t --field-separator= -F --field= -z --zero-terminated --header --header=
		-u --unique -m --merge -r --descending --reverse -n --numeric-sort
		-g --general-numeric-sort -h --human-numeric-sort -V --version-sort -M --month-sort
		--ignore-case
		-b --ignore-leading-blanks -s --stable
		-c --check --check= -C --skip-bad -o --output= --sync --no-sync -d --device=
		-L --list-devices -S --buffer-size= --memory= -T --temporary-directory=
		--host-threshold= --local-kernel= --device-sort= --parallel= --progress -v --verbose
		--version --help'

	# Split the line on blanks ourselves: bash also splits on '=' and ':'
	# (COMP_WORDBREAKS), which would cut --device=0:1 into pieces.
	read -r -a tokens <<<"$line"
	if [[ $line == *[[:blank:]] || ${#tokens[@]} -eq 0 ]]; then
		tokens+=("")
	fi
	cur=${tokens[${#tokens[@]} - 1]}
	prev=
	((${#tokens[@]} > 1)) && prev=${tokens[${#tokens[@]} - 2]}

	opt='' val=$cur
	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*} val=${cur#*=}
	elif [[ $prev == -* && $prev != *=* ]]; then
		opt=$prev
	fi
	# Options whose value is attached (-kf64, -cquiet) are left alone.

	case $opt in
	-k | --key-type) replies=(u32 i32 f32 u64 i64 f64 str bytes:) ;;
	-K | --sort-key)
		# FIELD,TYPE[,r]: the types after the field number's comma.
		if [[ $val == +([0-9]),* ]]; then
			local t
			for t in str u32 i32 f32 u64 i64 f64; do
				replies+=("${val%%,*},$t" "${val%%,*},$t,r")
			done
		fi
		;;
	-f | --format) replies=(bin kv npy) ;;
	-t | --field-separator) replies=(':' ',' ';' '=' '\\t' blank) ;;
	--local-kernel) replies=(bitonic merge) ;;
	--device-sort) replies=(auto radix bitonic) ;;
	--check)
		# Only as --check=MODE: a separate word is a file.
		if [[ $cur == --check=* ]]; then
			replies=(diagnose-first quiet silent)
		else
			opt=
		fi
		;;
	-d | --device) mapfile -t replies < <(_clsort_devices "${COMP_WORDS[0]}") ;;
	-S | --buffer-size) replies=(256M 1G 4G 25% 50% 75%) ;;
	--memory) replies=(256M 1G 4G 16G) ;;
	--header)
		# Only as --header=N: a separate word is a file.
		if [[ $cur == --header=* ]]; then
			replies=(1 2)
		else
			opt=
		fi
		;;
	-R | --record-size | --key-offset | --host-threshold | --parallel | -F | --field)
		COMPREPLY=()
		return
		;;
	-o | --output) mapfile -t replies < <(compgen -f -- "$val") ;;
	-T | --temporary-directory) mapfile -t replies < <(compgen -d -- "$val") ;;
	*) opt= ;;
	esac

	if [[ -z $opt ]]; then
		val=$cur
		if [[ $cur == -?* ]]; then
			# shellcheck disable=SC2086
			mapfile -t replies < <(compgen -W "$opts" -- "$cur")
		else
			mapfile -t replies < <(compgen -f -- "$cur")
			compopt -o filenames 2>/dev/null
		fi
	else
		mapfile -t replies < <(compgen -W "${replies[*]}" -- "$val")
		[[ $opt == -o || $opt == --output || $opt == -T || $opt == --temporary-directory ]] &&
			compopt -o filenames 2>/dev/null
	fi

	# Bash replaces only its own current word, the part of the token after
	# the last '=' or ':': hand back that part of each reply.
	word=${COMP_WORDS[COMP_CWORD]}
	[[ $line == *[[:blank:]] ]] && word=
	local prefix=${cur%"$val"} skip
	COMPREPLY=()
	for r in "${replies[@]}"; do
		r=$prefix$r
		skip=$((${#cur} - ${#word}))
		((skip < 0)) && skip=0
		COMPREPLY+=("${r:skip}")
	done
	if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *[=:] ]]; then
		compopt -o nospace 2>/dev/null
	fi
	return 0
}
complete -F _clsort clsort
