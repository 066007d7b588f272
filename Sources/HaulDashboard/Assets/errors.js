// The meaning of a failed download's errorCode, in words. Haul's daemon reports Haul's exit
// statuses; aria2 its own numbering. The daemon says which by listing "Haul" among the
// enabledFeatures of aria2.getVersion (docs/DASHBOARD.md).

const HAUL = {
  1: 'generic failure',
  2: 'usage error: a bad option, URL or value',
  3: 'local file error: the file could not be created or written (disk full, unsafe path, not a regular file)',
  4: 'network failure after retries: refused, reset, name not resolved, timed out, stalled or cut short',
  5: 'TLS failure: the certificate is not trusted, names another host, or the handshake failed',
  6: 'authentication refused by the server (401, 403 or 407)',
  7: 'protocol error: a malformed response, a range mismatch, a limit exceeded or a redirect refused',
  8: 'the server answered with an error status after retries',
  9: 'integrity failure: the checksum or the length does not match',
  10: 'the destination exists and conflicts are set to fail',
  11: 'another process is downloading the same file',
  130: 'interrupted; the partial download is kept for resume',
};

const ARIA2 = {
  1: 'unknown error',
  2: 'timed out',
  3: 'the server has no such file',
  4: 'the file was not found too many times',
  5: 'aborted: the download was too slow',
  6: 'network problem',
  7: 'unfinished when the daemon stopped',
  8: 'the server does not support resuming',
  9: 'not enough disk space',
  10: 'the piece length differs from the control file',
  11: 'the same file is being downloaded already',
  13: 'the file exists already',
  14: 'the file could not be renamed',
  15: 'the existing file could not be opened',
  16: 'the file could not be created or truncated',
  17: 'file input/output error',
  18: 'the folder could not be created',
  19: 'the host name could not be resolved',
  22: 'the server sent a bad or unexpected HTTP response',
  23: 'too many redirects',
  24: 'HTTP authorization failed',
  28: 'a bad or unknown option',
  29: 'the server is overloaded or down for maintenance',
  32: 'checksum validation failed',
};

/** The words for `code` ("3" or 3) under Haul's table or aria2's; null for success or nothing. */
export function exitCodeMeaning(code, { haul }) {
  const number = Number(code);
  if (!Number.isInteger(number) || number === 0) return null;
  const meaning = (haul ? HAUL : ARIA2)[number];
  return meaning ? `exit code ${number}: ${meaning}` : `exit code ${number}`;
}
