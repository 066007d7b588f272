# fish completion for haul. Generated from haul's option tables by
# Sources/HaulCLI/Reference/FishCompletion.swift: do not edit. Regenerate with
# HAUL_UPDATE_README=1 swift test --filter PackagingFilesTests.

# The command being typed: the word after haul when it names one, else haul (the download command).
function __haul_command
    set -l tokens (commandline -opc)
    if set -q tokens[2]; and contains -- $tokens[2] demo daemon add ls pause resume rm
        echo $tokens[2]
    else
        echo haul
    end
end

# Whether the command being typed is $argv[1].
function __haul_is
    test (__haul_command) = $argv[1]
end

# Whether the word being typed is the first after haul.
function __haul_first
    test (count (commandline -opc)) -eq 1
end

# The folders that complete the value being typed (what follows --name= when it is there).
function __haul_directories
    __fish_complete_directories (string replace -r -- '^--[^=]*=' '' (commandline -ct)) Folder
end

# Only the download command takes files as operands.
complete -c haul -n 'not __haul_is haul' -f
complete -c haul -n __haul_first -a demo -d 'download a generated file from a local server, with 1 connection and with N'
complete -c haul -n __haul_first -a daemon -d 'run the download service (aria2\'s JSON-RPC and a web dashboard)'
complete -c haul -n __haul_first -a add -d 'add downloads to a running daemon'
complete -c haul -n __haul_first -a ls -d 'list the daemon\'s downloads'
complete -c haul -n __haul_first -a pause -d 'pause downloads'
complete -c haul -n __haul_first -a resume -d 'resume paused downloads'
complete -c haul -n __haul_first -a rm -d 'remove downloads (or forget ended ones)'

complete -c haul -n '__haul_is haul' -s o -l output -r -F -d 'save the (single) URL as FILE'
complete -c haul -n '__haul_is haul' -s d -l dir -x -a '(__haul_directories)' -d 'save into DIR (created if missing)'
complete -c haul -n '__haul_is haul' -s x -l connections -x -d 'connections per download, 1-16'
complete -c haul -n '__haul_is haul' -s j -l max-downloads -x -d 'downloads running at once'
complete -c haul -n '__haul_is haul' -s i -l input-file -r -F -d 'read URLs from FILE, one per line (\'-\' = stdin)'
complete -c haul -n '__haul_is haul' -l mirror -x -d 'another server of the (single) URL\'s file, repeatable: segments come from every server (-x each), and one that fails or lags far behind is set aside'
complete -c haul -n '__haul_is haul' -l max-sources -x -d 'servers one download uses at most: its URL, its mirrors and those its server names (Link: rel=duplicate, never https to http)'
complete -c haul -n '__haul_is haul' -l metalink -x -a 'follow off' -d 'follow: a download whose server names a Metalink document (Link: rel=describedby) gives way to it, and the document\'s files come with their servers, hashes and pieces'
complete -c haul -n '__haul_is haul' -l checksum -x -d 'verify the file (sha256, sha512, sha1 or md5) before it gets its final name'
complete -c haul -n '__haul_is haul' -l limit-rate -x -d 'overall cap in bytes/s shared by all downloads, suffixes K, M, G (1024-based)'
complete -c haul -n '__haul_is haul' -l retries -x -d 'attempts after a retryable failure'
complete -c haul -n '__haul_is haul' -l retry-wait -x -d 'first backoff delay'
complete -c haul -n '__haul_is haul' -l retry-connrefused -d 'retry a refused connection too (a server that is restarting)'
complete -c haul -n '__haul_is haul' -l connect-timeout -x -d 'time allowed to connect'
complete -c haul -n '__haul_is haul' -l header-timeout -x -d 'time allowed for the response head once the request is sent'
complete -c haul -n '__haul_is haul' -l stall-timeout -x -d 'drop and retry a connection that delivers no byte for this long, waiting for the response head included'
complete -c haul -n '__haul_is haul' -s H -l header -x -d 'extra request header, repeatable'
complete -c haul -n '__haul_is haul' -l on-conflict -x -a 'rename overwrite skip fail' -d 'when the chosen name exists: rename (default, name.1.ext), overwrite, skip or fail'
complete -c haul -n '__haul_is haul' -l no-continue -d 'discard any partial download of this file and start over (a file an earlier run finished is downloaded again too)'
complete -c haul -n '__haul_is haul' -l cacert -r -F -d 'also trust the CA certificates in this PEM file'
complete -c haul -n '__haul_is haul' -s k -l insecure -d 'do not verify TLS certificates (warns once)'
complete -c haul -n '__haul_is haul' -l engine -x -a 'native urlsession' -d 'native (default) or urlsession'
complete -c haul -n '__haul_is haul' -l endpoint -x -d 'the server for s3:// and oss:// URLs (an S3- or OSS-compatible one)'
complete -c haul -n '__haul_is haul' -l proxy -x -d 'proxy for every URL (long form only: -x is --connections): http:// (the default), https://, socks5:// (names resolved here) or socks5h:// (by the proxy)'
complete -c haul -n '__haul_is haul' -l noproxy -x -d 'comma-separated hosts, domains, IP addresses and CIDR blocks that bypass the proxy (\'*\' for all)'
complete -c haul -n '__haul_is haul' -l proxy-cacert -r -F -d 'also trust the CA certificates in this PEM file for an https:// proxy'
complete -c haul -n '__haul_is haul' -l proxy-insecure -d 'do not verify an https:// proxy\'s certificate (origins are still verified)'
complete -c haul -n '__haul_is haul' -s u -l user -x -d 'Basic credentials for the URL\'s origin only (never after a redirect to another origin)'
complete -c haul -n '__haul_is haul' -s n -l netrc -d 'credentials per host from $NETRC or ~/.netrc (which must be private: chmod 600)'
complete -c haul -n '__haul_is haul' -l netrc-file -r -F -d 'like --netrc, from FILE'
complete -c haul -n '__haul_is haul' -s b -l cookies -r -F -d 'send the cookies of this Netscape cookies.txt file where they match, redirects included'
complete -c haul -n '__haul_is haul' -l json -d 'machine-readable events on stdout, one JSON object per line'
complete -c haul -n '__haul_is haul' -s q -l quiet -d 'print nothing but errors'
complete -c haul -n '__haul_is haul' -s h -l help -d 'show this help and exit'
complete -c haul -n '__haul_is haul' -s V -l version -d 'show the version and exit'

complete -c haul -n '__haul_is demo' -l size -x -d 'size of the generated file, suffixes K, M, G (1024-based)'
complete -c haul -n '__haul_is demo' -l connections -x -d 'connections for the second download, 1-16'
complete -c haul -n '__haul_is demo' -s h -l help -d 'show this help and exit'

complete -c haul -n '__haul_is daemon' -s d -l dir -x -a '(__haul_directories)' -d 'the download root: every download lands in it or below (created if missing)'
complete -c haul -n '__haul_is daemon' -l listen -x -d 'where to serve JSON-RPC (HTTP POST and WebSocket at /jsonrpc)'
complete -c haul -n '__haul_is daemon' -l secret -x -d 'the secret every call carries as token:S'
complete -c haul -n '__haul_is daemon' -l secret-file -r -F -d 'read the secret from FILE'
complete -c haul -n '__haul_is daemon' -l state -r -F -d 'the SQLite file that holds the list, default $XDG_STATE_HOME/haul/daemon.db'
complete -c haul -n '__haul_is daemon' -l node -x -d 'with --state=postgresql://, this daemon\'s name in the fleet'
complete -c haul -n '__haul_is daemon' -l allow-origin -x -d 'also accept calls from web pages of ORIGIN (such as https://ui.example), repeatable'
complete -c haul -n '__haul_is daemon' -s j -l max-downloads -x -d 'downloads running at once'
complete -c haul -n '__haul_is daemon' -s x -l connections -x -d 'connections per download, 1-16'
complete -c haul -n '__haul_is daemon' -l limit-rate -x -d 'overall cap in bytes/s, suffixes K, M, G (1024-based)'
complete -c haul -n '__haul_is daemon' -l limit-schedule -x -d 'the overall cap by local time: comma-separated [DAYS ]HH:MM-HH:MM=RATE, such as \'Mon-Fri 09:00-18:00=2M, 23:00-07:00=0\' (0 = no limit'
complete -c haul -n '__haul_is daemon' -l json -d 'log events as JSON lines on stdout instead of text on stderr'
complete -c haul -n '__haul_is daemon' -l on-complete -r -F -d 'run PROGRAM (no shell) when a download completes: arguments GID, 1, PATH as aria2\'s hook, the download\'s facts in HAUL_* variables'
complete -c haul -n '__haul_is daemon' -l on-error -r -F -d 'like --on-complete, when a download fails'
complete -c haul -n '__haul_is daemon' -l conf-path -r -F -d 'read options from FILE: key=value lines as aria2.conf (keys are these long names, # comments)'
complete -c haul -n '__haul_is daemon' -s h -l help -d 'show this help and exit'

complete -c haul -n '__haul_is add' -l rpc -x -d 'the daemon\'s JSON-RPC address'
complete -c haul -n '__haul_is add' -l secret-file -r -F -d 'the file holding the daemon\'s secret'
complete -c haul -n '__haul_is add' -s d -l dir -x -d '(add) a folder inside the daemon\'s download root'
complete -c haul -n '__haul_is add' -s o -l output -x -d '(add, one URL) the file name'
complete -c haul -n '__haul_is add' -s h -l help -d 'show this help and exit'

complete -c haul -n '__haul_is ls' -l rpc -x -d 'the daemon\'s JSON-RPC address'
complete -c haul -n '__haul_is ls' -l secret-file -r -F -d 'the file holding the daemon\'s secret'
complete -c haul -n '__haul_is ls' -s h -l help -d 'show this help and exit'

complete -c haul -n '__haul_is pause' -l rpc -x -d 'the daemon\'s JSON-RPC address'
complete -c haul -n '__haul_is pause' -l secret-file -r -F -d 'the file holding the daemon\'s secret'
complete -c haul -n '__haul_is pause' -s h -l help -d 'show this help and exit'

complete -c haul -n '__haul_is resume' -l rpc -x -d 'the daemon\'s JSON-RPC address'
complete -c haul -n '__haul_is resume' -l secret-file -r -F -d 'the file holding the daemon\'s secret'
complete -c haul -n '__haul_is resume' -s h -l help -d 'show this help and exit'

complete -c haul -n '__haul_is rm' -l rpc -x -d 'the daemon\'s JSON-RPC address'
complete -c haul -n '__haul_is rm' -l secret-file -r -F -d 'the file holding the daemon\'s secret'
complete -c haul -n '__haul_is rm' -s h -l help -d 'show this help and exit'
