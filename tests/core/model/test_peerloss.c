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
