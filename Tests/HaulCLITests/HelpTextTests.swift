@testable import HaulCLI
import HaulTestSupport
import Testing

/// The help text is held here word for word: a change to the option table shows up as a diff.
@Suite struct HelpTextTests {
    @Test func downloadHelpIsTheGoldenText() {
        let golden = """
            Usage: haul [OPTION]... URL...
                   haul demo [--size=SIZE] [--connections=N]
                   haul daemon --dir=DIR [OPTION]...
                   haul add URL... | haul ls | haul pause|resume|rm ID...

            Download files over HTTP(S) quickly and safely: a file gets its final name only
            once it is complete. Rerunning the same command after an interruption resumes:
            bytes already on disk and still valid are not downloaded again.

            Options:
              -o, --output=FILE              save the (single) URL as FILE; an existing FILE
                                             is replaced only when the download succeeds
              -d, --dir=DIR                  save into DIR (created if missing); default:
                                             the current directory; a relative -o is inside
                                             DIR, an absolute one ignores it
              -x, --connections=N            connections per download, 1-16; default 4; 1
                                             disables splitting
              -j, --max-downloads=N          downloads running at once; default 4; the
                                             others wait in a queue
              -i, --input-file=FILE          read URLs from FILE, one per line ('-' =
                                             stdin); URLs separated by tabs on one line are
                                             servers of one file; blank lines and # comments
                                             are ignored
                  --mirror=URL               another server of the (single) URL's file,
                                             repeatable: segments come from every server (-x
                                             each), and one that fails or lags far behind is
                                             set aside; -H and -u go to the URL given only
                  --max-sources=N            servers one download uses at most: its URL, its
                                             mirrors and those its server names (Link:
                                             rel=duplicate, never https to http); 1-64;
                                             default 5; 1 uses the URL alone
                  --metalink=MODE            follow: a download whose server names a
                                             Metalink document (Link: rel=describedby) gives
                                             way to it, and the document's files come with
                                             their servers, hashes and pieces; off (default)
                  --checksum=ALGO=HEX        verify the file (sha256, sha512, sha1 or md5)
                                             before it gets its final name
                  --limit-rate=RATE          overall cap in bytes/s shared by all downloads,
                                             suffixes K, M, G (1024-based)
                  --retries=N                attempts after a retryable failure; default 5;
                                             0 = none; once a download used them all failing
                                             to connect to a host, the others do not retry
                                             that failure
                  --retry-wait=SECONDS       first backoff delay; default 1; doubles,
                                             jittered, capped at 60
                  --retry-connrefused        retry a refused connection too (a server that
                                             is restarting); by default a download whose
                                             server never answered fails at once when
                                             refused
                  --connect-timeout=SECONDS  time allowed to connect; default 30
                  --header-timeout=SECONDS   time allowed for the response head once the
                                             request is sent; default 30
                  --stall-timeout=SECONDS    drop and retry a connection that delivers no
                                             byte for this long, waiting for the response
                                             head included; default 30
              -H, --header='Name: value'     extra request header, repeatable; sent to the
                                             original origin only
                  --on-conflict=MODE         when the chosen name exists: rename (default,
                                             name.1.ext), overwrite, skip or fail
                  --no-continue              discard any partial download of this file and
                                             start over (a file an earlier run finished is
                                             downloaded again too)
                  --cacert=FILE              also trust the CA certificates in this PEM file
              -k, --insecure                 do not verify TLS certificates (warns once)
                  --engine=NAME              native (default) or urlsession
                  --endpoint=URL             the server for s3:// and oss:// URLs (an S3- or
                                             OSS-compatible one); credentials come from
                                             AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
                                             AWS_SESSION_TOKEN, AWS_REGION or
                                             OSS_ACCESS_KEY_ID, OSS_ACCESS_KEY_SECRET
                  --proxy=URL                proxy for every URL (long form only: -x is
                                             --connections): http:// (the default),
                                             https://, socks5:// (names resolved here) or
                                             socks5h:// (by the proxy); USER:PASSWORD@ in it
                                             are the proxy's credentials; overrides
                                             http_proxy, https_proxy and all_proxy; --proxy=
                                             turns them off
                  --noproxy=LIST             comma-separated hosts, domains, IP addresses
                                             and CIDR blocks that bypass the proxy ('*' for
                                             all); overrides no_proxy; --noproxy= cancels it
                  --proxy-cacert=FILE        also trust the CA certificates in this PEM file
                                             for an https:// proxy
                  --proxy-insecure           do not verify an https:// proxy's certificate
                                             (origins are still verified)
              -u, --user=USER:PASSWORD       Basic credentials for the URL's origin only
                                             (never after a redirect to another origin)
              -n, --netrc                    credentials per host from $NETRC or ~/.netrc
                                             (which must be private: chmod 600)
                  --netrc-file=FILE          like --netrc, from FILE
              -b, --cookies=FILE             send the cookies of this Netscape cookies.txt
                                             file where they match, redirects included
                  --json                     machine-readable events on stdout, one JSON
                                             object per line; no progress bar
              -q, --quiet                    print nothing but errors
              -h, --help                     show this help and exit
              -V, --version                  show the version and exit

            Durations are in seconds and may have decimals (2.5).

            Exit status: 0 all downloads succeeded; 1 generic failure; 2 usage error;
            3 local file error; 4 network failure; 5 TLS failure; 6 authentication refused;
            7 protocol error; 8 server error response; 9 integrity failure;
            10 destination exists (--on-conflict=fail); 11 file locked by another download;
            130 interrupted. With several downloads the lowest non-zero status wins.

            """
        #expect(HelpText.download == golden)
    }

    @Test func demoHelpIsTheGoldenText() {
        let golden = """
            Usage: haul demo [--size=SIZE] [--connections=N]

            Serves a generated file on 127.0.0.1 and downloads it twice, with 1 connection
            and with N, to show the speed-up with no internet. Removes what it wrote.

            Options:
                  --size=SIZE      size of the generated file, suffixes K, M, G
                                   (1024-based); default 512M
                  --connections=N  connections for the second download, 1-16; default 4
              -h, --help           show this help and exit

            """
        #expect(HelpText.demo == golden)
    }

    @Test(arguments: [HelpText.download, HelpText.demo])
    func noLineIsWiderThan80Columns(text: String) {
        for line in text.split(separator: "\n") {
            #expect(line.count <= 80, "\(line)")
        }
    }

    @Test func everyOptionOfTheTableIsInTheHelp() {
        for spec in OptionTable.download {
            let left = HelpText.leftColumn(spec)
            let line = HelpText.download.split(separator: "\n").first { $0.hasPrefix(left + " ") }
            #expect(line != nil, "no help line for \(spec.longSpelling)")
            if let short = spec.short { #expect(left.contains("-\(short), --\(spec.long)")) }
        }
    }

    @Test func unsupportedOptionsAreMarked() {
        let marked = OptionTable.download.filter { $0.availability == .notYetSupported }.map(\.id)
        #expect(marked.isEmpty)
        let text = HelpText.download.replacingNewlinesWithSpaces()
        #expect(!text.contains("splitting is not supported") && !text.contains("one after another"))
    }

    @Test func wrapKeepsWordsAndWidth() {
        #expect(HelpText.wrap("aa bb cc dd", width: 5) == ["aa bb", "cc dd"])
        #expect(HelpText.wrap("a verylongword b", width: 4) == ["a", "verylongword", "b"])
        #expect(HelpText.wrap("", width: 10).isEmpty)
    }
}

extension String {
    /// The text with each newline and the indentation after it collapsed into one space.
    fileprivate func replacingNewlinesWithSpaces() -> String {
        split(separator: "\n").map { $0.trimmingBlanks() }.joined(separator: " ")
    }
}
