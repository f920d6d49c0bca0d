#include <criterion/criterion.h>

#include "core/model/peerloss.h"

/* The words of torch 1.13's gloo and TCPStore, and NCCL's, for a peer that went away */
Test(peerloss, a_broken_connection_is_a_lost_peer)
{
    cr_assert(peerloss_said("rank 3 on n2: RuntimeError: Connection reset by peer"));
    cr_assert(peerloss_said("rank 0 on h1: RuntimeError: [../third_party/gloo/gloo/transport/"
                            "tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:43122"));
    cr_assert(peerloss_said("rank 2 on n1: RuntimeError: Broken pipe"));
    cr_assert(peerloss_said("NCCL error: remote process exited or there was a network error"));
}

Test(peerloss, a_crash_of_its_own_is_not)
{
    cr_assert_not(peerloss_said("rank 1 on n1: RuntimeError: crashing on purpose"));
    cr_assert_not(peerloss_said("rank 0 on n1: RuntimeError: CUDA out of memory"));
    cr_assert_not(peerloss_said(""));
    cr_assert_not(peerloss_said(NULL));
}

/* strerror's words are anyone's: a rank's own Python error from its data pipeline (a loader
 * worker's pipe, a socket of its own) is the cause of the trial's failure, not a lost peer. */
Test(peerloss, a_ranks_own_python_pipe_or_reset_error_is_a_cause)
{
    cr_assert_not(peerloss_said("rank 1 on n1: BrokenPipeError: [Errno 32] Broken pipe"));
    cr_assert_not(peerloss_said("rank 0 on h2: ConnectionResetError: [Errno 104] Connection "
                                "reset by peer"));
}

/* The same words from torch's C++ transport, however it is named, are a lost peer */
Test(peerloss, strerrors_words_beside_torchs_transport_are_a_lost_peer)
{
    cr_assert(peerloss_said("[E ProcessGroupGloo.cpp:137] Connection reset by peer"));
    cr_assert(peerloss_said("c10d: sending to rank 1: Broken pipe"));
    cr_assert(peerloss_said("TCPStore: recv: Connection reset by peer"));
    cr_assert(peerloss_said("NCCL WARN Net : Connection reset by peer"));
    cr_assert(peerloss_said("[../third_party/gloo/gloo/transport/tcp/pair.cc:589] Broken pipe"));
}
