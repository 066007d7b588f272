// The meaning of a failed download's errorCode, in words: aria2's numbering, which Haul's daemon
// keeps so that aria2's clients read it as they expect (docs/DAEMON.md).

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

/** The words for `code` ("3" or 3); null for success or nothing. */
export function exitCodeMeaning(code) {
  const number = Number(code);
  if (!Number.isInteger(number) || number === 0) return null;
  const meaning = ARIA2[number];
  return meaning ? `exit code ${number}: ${meaning}` : `exit code ${number}`;
}
