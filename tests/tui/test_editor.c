#include <criterion/criterion.h>

#include "core/sim/simcluster.h"
#include "tui/editor.h"

static SimCluster *sim;
static Schedule *base;

/* Setting B with the batch on the first two CPUs of c4x2-0 and c4x2-1, both workers/PS. */
static void setup(void)
{
    Error err;
    sim = simcluster_new("B:googlenet", &err);
    cr_assert_not_null(sim, "%s", err.msg);
    const Cluster *c = simcluster_cluster(sim);
    base = schedule_new(c, simcluster_job(sim));
    int batch = base->job.batch;
    for (size_t m = 1; m <= 2; m++) {
        base->worker[m] = base->ps[m] = 1;
        base->inputs[c->machines[m].first_device] = batch / 2;
    }
    cr_assert_eq(schedule_validate(base, &err), 0, "%s", err.msg);
}

static void teardown(void)
{
    schedule_free(base);
    simcluster_free(sim);
}

/* The editor row of a machine's first device. */
static size_t device_row(const Editor *e, size_t machine)
{
    for (size_t i = 0; i < e->n_rows; i++)
        if (e->rows[i].machine == machine && e->rows[i].device >= 0)
            return i;
    cr_assert_fail("no device row for machine %zu", machine);
    return 0;
}

TestSuite(editor, .init = setup, .fini = teardown);

Test(editor, lists_a_row_per_machine_and_per_device)
{
    Editor *e = editor_new(base);
    cr_assert_eq(e->n_rows, base->cluster->n_machines + base->cluster->n_devices);
    cr_assert(editor_check(e, NULL) == 0);
    editor_free(e);
}

Test(editor, moving_inputs_from_a_marked_source_keeps_the_batch)
{
    Editor *e = editor_new(base);
    const Cluster *c = base->cluster;
    editor_cursor_set(e, device_row(e, 1));
    cr_assert_eq(editor_toggle_mark(e), 0);
    editor_cursor_set(e, device_row(e, 2));
    unsigned v = e->version;
    cr_assert_eq(editor_adjust(e, 1), e->step);
    cr_assert_gt(e->version, v);
    cr_assert_eq(e->s->inputs[c->machines[2].first_device], base->job.batch / 2 + e->step);
    cr_assert_eq(e->s->inputs[c->machines[1].first_device], base->job.batch / 2 - e->step);
    cr_assert_eq(editor_unplaced(e), 0);
    Error err;
    cr_assert_eq(editor_check(e, &err), 0, "%s", err.msg);
    editor_free(e);
}

Test(editor, an_unbalanced_edit_is_refused_with_the_reason)
{
    Editor *e = editor_new(base);
    editor_cursor_set(e, device_row(e, 2));
    editor_adjust(e, 1); /* no source: the total grows */
    cr_assert_eq(editor_unplaced(e), e->step);
    Error err;
    cr_assert_eq(editor_check(e, &err), -1);
    cr_assert(strstr(err.msg, "sum to the batch"), "reason: %s", err.msg);
    editor_free(e);
}

Test(editor, a_non_worker_holding_inputs_is_refused)
{
    Editor *e = editor_new(base);
    editor_cursor_set(e, device_row(e, 1));
    cr_assert_eq(editor_toggle_worker(e), 0);
    Error err;
    cr_assert_eq(editor_check(e, &err), -1);
    cr_assert(strstr(err.msg, "not a worker"), "reason: %s", err.msg);
    editor_free(e);
}

Test(editor, no_parameter_server_is_refused)
{
    Editor *e = editor_new(base);
    editor_cursor_set(e, device_row(e, 1));
    editor_toggle_ps(e);
    editor_cursor_set(e, device_row(e, 2));
    editor_toggle_ps(e);
    Error err;
    cr_assert_eq(editor_check(e, &err), -1);
    cr_assert(strstr(err.msg, "parameter server"), "reason: %s", err.msg);
    editor_free(e);
}

Test(editor, removing_never_goes_below_zero)
{
    Editor *e = editor_new(base);
    editor_cursor_set(e, device_row(e, 0)); /* g2-0 holds nothing */
    cr_assert_eq(editor_adjust(e, -1), 0);
    for (size_t d = 0; d < base->cluster->n_devices; d++)
        cr_assert_geq(e->s->inputs[d], 0);
    editor_free(e);
}

Test(editor, the_source_cannot_give_more_than_it_has)
{
    Editor *e = editor_new(base);
    editor_cursor_set(e, device_row(e, 0));
    editor_toggle_mark(e); /* empty source */
    editor_cursor_set(e, device_row(e, 2));
    cr_assert_eq(editor_adjust(e, 1), 0);
    editor_free(e);
}

Test(editor, step_cycles_and_the_original_is_untouched)
{
    Editor *e = editor_new(base);
    editor_cycle_step(e, 1);
    cr_assert_eq(e->step, 32);
    editor_cycle_step(e, 1);
    editor_cycle_step(e, 1);
    cr_assert_eq(e->step, 1);
    editor_cursor_set(e, device_row(e, 2));
    editor_adjust(e, 1);
    cr_assert_eq(base->inputs[base->cluster->machines[2].first_device], base->job.batch / 2);
    editor_free(e);
}
