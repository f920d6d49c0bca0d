/* Whether a trial's error text says its process lost a peer (a connection the other side
 * broke): the effect of another rank's failure, not a cause. Of a data-parallel trial's
 * ranks, the one that crashed writes its own error; every peer then fails in its next
 * collective or rendezvous with such words, and the launchers may read a peer's first. */
#ifndef TUNEDECK_PEERLOSS_H
#define TUNEDECK_PEERLOSS_H

/* 1 when `text` holds the words gloo, TCPStore or NCCL use for a peer gone away: "Connection
 * closed by peer" or "remote process exited" anywhere; "Connection reset by peer" or "Broken
 * pipe" only beside a mark of torch's C++ transport ("RuntimeError", "gloo", "c10d",
 * "TCPStore", "ProcessGroup", "NCCL"), since a rank's own Python BrokenPipeError or
 * ConnectionResetError (its data pipeline) is a cause. Else 0. */
int peerloss_said(const char *text);

#endif
