/* Opening, journaling and closing a tuning session (remote/session/session.h); its stops of
 * leftover process groups are session_stop.c's, its trial log session_triallog.c's. */
#include "remote/session/session.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"
#include "core/base/plural.h"
#include "remote/session/session_priv.h"
#include "remote/slurm/slurm_inventory.h"

Session *session_new(int with_journal, const char *journal_dir)
{
    Session *s = calloc(1, sizeof *s);
    /* Without a journal the object still answers (an empty id, events ignored), so the
     * process groups are kept and stopped all the same. */
    if (!s || !(s->journal = tune_journal_new(journal_dir))) {
        free(s);
        return NULL;
    }
    s->with_journal = with_journal;
    s->procs.tj = s->journal;
    return s;
}

int session_resume(Session *s, const char *id_or_path, SessionSpec *spec, int budget_set,
                   Error *err)
{
    if (!s->with_journal)
        return error_set(err, "--resume: a resumed session needs its journal");
    TuneSetup *rs = &s->resumed;
    if (tune_journal_load(s->journal, id_or_path, rs, err) < 0)
        return -1;
    s->resume = 1;
    s->resume_budget_set = budget_set;
    spec->sim = rs->sim[0] ? rs->sim : NULL;
    spec->cluster = spec->job = rs->sim[0] ? NULL : tune_journal_path(s->journal);
    spec->cluster_json = rs->cluster;
    spec->job_json = rs->job;
    spec->optimizer = rs->optimizer;
    spec->launcher = rs->launcher;
    spec->trial_cmd = rs->trial_cmd[0] ? rs->trial_cmd : NULL;
    spec->seed = rs->seed;
    spec->trial_timeout_s = rs->timeout_s;
    spec->no_prune = rs->no_prune;
    spec->stop_when_converged = rs->stop_when_converged;
    /* The budget counts every trial of the session, those already run included: one below
     * them would leave the session past its end (4/2) before it starts. They are counted as
     * the replay keeps them (trials after a damaged line too, not a line it refuses), on the
     * journal's cluster built for the count alone, before anything is reached. */
    int done = (int)tune_journal_trials(s->journal, rs);
    if (budget_set && spec->budget < done)
        return error_set(err,
                         "--budget %d: the session already has %d trial%s (%s); expected "
                         "--budget %d or more (the budget counts its trials so far too, "
                         "interrupted ones included)",
                         spec->budget, done, plural_s(done), tune_journal_path(s->journal), done);
    if (!budget_set) /* a journal cut before its `ended` line may have run past its budget */
        spec->budget = (int)rs->budget > done ? (int)rs->budget : done;
    else /* the operator's number: no override's raise in it to give back */
        rs->budget_raised = 0;
    return 0;
}

/* A resumed session's setting that its journal's session line holds was refused: the message
 * names that file and field, not the option it stood for, and the journal is bad input. */
static int journal_setting_refused(const Session *s, const char *field, Error *err)
{
    if (!s->resume)
        return -1;
    error_prefix(err, "%s: session: field '%s'", tune_journal_path(s->journal), field);
    return error_mark(err, ERROR_INPUT);
}

/* A file's misspelt key (its warning in line, if any), to on_warning or else on_report. */
static void say_misspelt(const SessionSpec *o, int any, const char *line)
{
    TuneOrphanReportFn say = o->on_warning ? o->on_warning : o->on_report;
    if (any && say)
        say(o->report_userdata, line);
}

/* The simulator, or the inventory and job (from files, or as a journal recorded them). */
static int open_cluster(Session *s, const SessionSpec *o, Error *err)
{
    if (o->sim) {
        if (!(s->sim = simcluster_new(o->sim, err)))
            return journal_setting_refused(s, "sim", err);
        s->cluster = simcluster_cluster(s->sim);
        s->job = simcluster_job(s->sim);
        return 0;
    }
    /* A Slurm inventory from a file is read from the controller now; a journal's recorded
     * cluster is taken as it was. */
    if (o->slurm) {
        cJSON *root = cJSON_CreateObject();
        if (!root || !cJSON_AddStringToObject(root, "name", "slurm") ||
            !cJSON_AddStringToObject(root, "backend", "slurm") ||
            (o->slurm_partition &&
             !cJSON_AddStringToObject(root, "partition", o->slurm_partition)) ||
            (o->job_command && !cJSON_AddStringToObject(root, "job_command", o->job_command))) {
            cJSON_Delete(root);
            return error_set(err, "--slurm: out of memory");
        }
        s->owned_cluster = slurm_inventory_load(root, "--slurm", o->ssh_config,
                                                o->accept_new_host_keys, &s->slurm, err);
        cJSON_Delete(root);
    } else if (o->cluster_json) {
        s->owned_cluster = cluster_from_json(o->cluster_json, o->cluster, err);
    } else {
        cJSON *root = jfield_parse_file(o->cluster, err);
        if (!root)
            return error_mark(err, ERROR_INPUT);
        /* Said before the controller is asked: a misspelt "login" or "partiton" may be why
         * it does not answer, and a refusal would otherwise come with nothing of it. */
        char warning[ERROR_MSG_MAX];
        say_misspelt(o, inventory_misspelt_warning(root, o->cluster, warning, sizeof warning),
                     warning);
        s->owned_cluster = slurm_inventory_load(root, o->cluster, o->ssh_config,
                                                o->accept_new_host_keys, &s->slurm, err);
        cJSON_Delete(root);
    }
    if (!s->owned_cluster)
        return -1;
    s->cluster = s->owned_cluster;
    char line[ERROR_MSG_MAX];
    if (!o->job)
        return 0;
    if ((o->job_json ? job_from_json(o->job_json, o->job, &s->owned_job, err)
                     : job_load(o->job, &s->owned_job, err)) < 0)
        return -1;
    s->job = &s->owned_job;
    if (!o->job_json) /* still passed to the trial, as the docs say; only said */
        say_misspelt(o, job_misspelt_warning(s->job, o->job, line, sizeof line), line);
    return 0;
}

static int is_remote_launcher(const char *name)
{
    return strcmp(name, "per-host") == 0 || strcmp(name, "single") == 0;
}

/* The launcher by name, checked against what the session has. */
static const LauncherKind *choose_launcher(Session *s, const SessionSpec *o, Error *err)
{
    const char *lname = o->launcher                   ? o->launcher
                        : s->sim                      ? "sim"
                        : s->cluster->trial.launch[0] ? s->cluster->trial.launch
                                                      : "local";
    const LauncherKind *lk = launcher_find(lname);
    if (!lk) {
        error_set(err, "--launcher: unknown launcher '%s': expected one of %s", lname,
                  launcher_names());
        return NULL;
    }
    /* A Slurm inventory's nodes are reached through Slurm only, never by SSH to each (a
     * site's sshd there may refuse a login outside an allocation): per-host and single
     * tried ssh to each node's NodeAddr, and every trial failed "unreachable". */
    if (s->slurm && is_remote_launcher(lname)) {
        const char *src = o->cluster ? o->cluster : "--slurm";
        if (o->launcher)
            error_set(err,
                      "--launcher %s: %s is a Slurm inventory, whose nodes are reached through "
                      "Slurm only (srun steps, no SSH session to each): expected --launcher "
                      "slurm (its default), or no --launcher",
                      lname, src);
        else
            error_set(err,
                      "%s: trial: field 'launch': \"%s\" runs trials over SSH, but the nodes of "
                      "a Slurm inventory are reached through Slurm only: expected \"slurm\" (the "
                      "default), or no \"launch\"",
                      src, lname);
        error_mark(err, o->launcher ? ERROR_OTHER : ERROR_INPUT);
        return NULL;
    }
    if (strcmp(lname, "sim") == 0 && !s->sim) {
        error_set(err, "--launcher sim: expected --sim SPEC, not --cluster (the simulator "
                       "brings its own cluster)");
        return NULL;
    }
    if (strcmp(lname, "sim") == 0 && o->trial_cmd) {
        error_set(err, "--trial-cmd: the sim launcher runs the simulator itself, not a command; "
                       "expected --launcher local (or per-host, single, slurm) with it");
        return NULL;
    }
    s->trial_cmd = o->trial_cmd ? o->trial_cmd : s->cluster->trial.command;
    if (strcmp(lname, "sim") != 0 && (!s->trial_cmd || !s->trial_cmd[0])) {
        error_set(err,
                  "--trial-cmd: the %s launcher needs a trial command (or trial.command in the "
                  "inventory)",
                  lname);
        return NULL;
    }
    /* Said before any trial, not as every trial's failure once the launcher looks it up;
     * and only for this launcher, so a stale value never stops another or a resume. */
    if (strcmp(lname, "single") == 0 &&
        cluster_check_launch_host(s->cluster, o->cluster ? o->cluster : "--cluster", err) < 0)
        return NULL;
    /* The single launcher runs one command for the whole trial, without the rank fan-out:
     * per-device ranks would become one process with the whole batch and no RANK, a
     * measurement of something else that still looks like a trial. */
    if (strcmp(lname, "single") == 0 && strcmp(s->cluster->trial.ranks, "per-device") == 0) {
        error_set(err,
                  "%s: trial: field 'ranks': \"per-device\" needs the local, per-host or slurm "
                  "launcher; the single launcher runs one command for the whole trial",
                  o->cluster ? o->cluster : "--cluster");
        error_mark(err, ERROR_INPUT);
        return NULL;
    }
    /* Per-device ranks start the user's command once per device with inputs on the worker
     * machines, and nothing on a machine without inputs: a parameter-server job's PS machines
     * would run nothing, and the trial would time a script that never plays the PS role the
     * optimizer modelled and placed. Only an allreduce job's schedule is all ranks. */
    if (strcmp(s->cluster->trial.ranks, "per-device") == 0 && s->job->sync == JOB_SYNC_PS) {
        error_set(err,
                  "%s: trial: field 'ranks': \"per-device\" needs an allreduce job, but %s: field "
                  "'sync' is \"ps\" (the default), and the rank fan-out starts nothing on its PS "
                  "machines: expected \"sync\": \"allreduce\" in the job, or \"ranks\": "
                  "\"per-host\" (tunedeck-worker plays the PS roles)",
                  o->cluster ? o->cluster : "--cluster", o->job ? o->job : "the job");
        error_mark(err, ERROR_INPUT);
        return NULL;
    }
    snprintf(s->launcher, sizeof s->launcher, "%s", lname);
    return lk;
}

static int open_pool(Session *s, const SessionSpec *o, Error *err)
{
    HostPoolOptions po = {.accept_new_host_keys = o->accept_new_host_keys,
                          .ssh_config = o->ssh_config};
    s->pool = hostpool_new(&po, err);
    if (!s->pool)
        return error_prefix(err, "--cluster");
    if (hostpool_add_cluster(s->pool, s->cluster, err) < 0) /* a machine's: name its file */
        return error_prefix(err, "%s", o->cluster ? o->cluster : "--cluster");
    for (size_t m = 0; o->keep_hosts && m < hostpool_size(s->pool); m++)
        hostpool_connect(s->pool, m, 1);
    return 0;
}

/* Resume: what earlier runs of the session could not release (the login node was down at
 * their end) is released first: it holds, whole, the very nodes the new salloc asks for. */
static void release_left(Session *s, const SessionSpec *o)
{
    if (!s->resume || !s->journal)
        return;
    /* No session still runs here: the resume holds the journal's lock since session_resume
     * (tune_journal_load refuses a running one), so an allocation it journaled is left. */
    s->n_left = tune_alloc_left(tune_journal_log(s->journal), s->left, TUNE_ALLOC_LEFT_MAX);
    for (size_t i = 0; i < s->n_left; i++) {
        const TuneAllocLeft *l = &s->left[i];
        Error why;
        memset(&why, 0, sizeof why);
        int rc = slurm_alloc_release_left(s->slurm, l->job, l->name, &why);
        s->left_result[i] = rc > 0 ? "released" : rc == 0 ? "gone" : "";
        char line[ERROR_MSG_MAX + 512], hint[SLURM_ALLOC_HINT_MAX];
        const char *where = slurm_ctl_where(s->slurm);
        if (rc > 0)
            snprintf(line, sizeof line,
                     "the allocation an earlier run of this session left, Slurm job %s (%s), is "
                     "released (scancel on %s)",
                     l->job, l->name, where);
        else if (rc == 0)
            snprintf(line, sizeof line,
                     "the allocation an earlier run of this session left, Slurm job %s (%s), is "
                     "gone already (Slurm has no job of ours under that name with that id: its "
                     "time limit ended it, or someone cancelled it)",
                     l->job, l->name);
        else
            snprintf(line, sizeof line,
                     "the allocation an earlier run of this session left, Slurm job %s (%s), "
                     "could not be released: %s; %s",
                     l->job, l->name, why.msg,
                     slurm_alloc_release_hint(s->slurm, l->job, hint, sizeof hint));
        if (o->on_report)
            o->on_report(o->report_userdata, line);
    }
}

/* The slurm launcher's allocation (the one in SLURM_JOB_ID when tunedeck runs inside one).
 * With a login node, srun runs there too, on the same SSH session as every Slurm command. */
static int open_slurm(Session *s, const SessionSpec *o, Error *err)
{
    SlurmTarget t;
    memset(&t, 0, sizeof t);
    if (s->cluster->extra &&
        slurm_target_from_json(s->cluster->extra, o->cluster ? o->cluster : "--cluster", &t,
                               err) < 0)
        return -1;
    /* The inventory a journal recorded (a resume) has its ssh block as the cluster's own
     * field, not among the Slurm ones carried in extra: without it the login node was asked
     * on port 22 as the local user, whatever the inventory said. */
    if (!cJSON_GetObjectItemCaseSensitive(s->cluster->extra, "ssh"))
        t.ssh = s->cluster->ssh;
    if (!s->slurm &&
        !(s->slurm = slurm_target_ctl(&t, o->ssh_config, o->accept_new_host_keys, err)))
        return -1;
    /* salloc's own wait ends 5 s before the command's timeout would cut it (a cut salloc
     * can leave its job queued): on a busy partition it says so and revokes the job */
    double timeout_s = t.every.command_timeout_s > 0 ? t.every.command_timeout_s : 30;
    double wait_s = timeout_s > 10 ? timeout_s - 5 : timeout_s / 2;
    s->release_wait_s =
        t.every.release_wait_s > 0 ? t.every.release_wait_s : RELEASE_WAIT_DEFAULT_S;
    release_left(s, o);
    if (slurm_alloc_open(s->slurm, s->cluster, t.partition, getenv("SLURM_JOB_ID"), wait_s,
                         o->open_interrupted, o->report_userdata, &s->alloc, err) < 0)
        return error_prefix(err, "--launcher slurm");
    return 0;
}

/* Every tuner event reaches the journal before the caller acts on it. */
static void on_event(void *userdata, TunerEvent ev, const TrialRecord *rec)
{
    Session *s = userdata;
    tune_journal_on_event(s->journal, ev, rec);
    /* The trial log knows a trial by the journal's number, the one its schedule carries. */
    if (ev == TUNER_EVENT_STARTED)
        s->log_trial = rec->suggestion.schedule->trial;
    if (ev == TUNER_EVENT_FINISHED && rec->obs) {
        char outcome[ERROR_MSG_MAX + 32];
        snprintf(outcome, sizeof outcome, "%s%s%s", trial_status_name(rec->obs->status),
                 rec->obs->reason[0] ? ": " : "", rec->obs->reason);
        session_trial_log_end(s, rec->suggestion.schedule->trial, outcome);
    }
    /* an override the tuner dropped, its host refused since it was queued: said as the
     * refusals are, since no trial of it will show it */
    if (ev == TUNER_EVENT_DROPPED && rec->dropped_why && s->spec.on_report)
        s->spec.on_report(s->spec.report_userdata, rec->dropped_why);
    /* a resume with no trial left, given one by the console's :budget (or an override's
     * raise): its recheck, skipped at the start, before that first new trial */
    if (ev == TUNER_EVENT_BUDGET)
        session_recheck_begin(s);
    if (s->spec.on_event)
        s->spec.on_event(s->spec.userdata, ev, rec);
}

static void on_proc(void *userdata, int trial, const char *machine, long pgid,
                    const char *mark)
{
    Session *s = userdata;
    tune_procs_on_proc(&s->procs, trial, machine, pgid, mark);
}

static void on_proc_lost(void *userdata, int trial, const char *machine, long pgid,
                         const char *mark, ProcLostCause cause)
{
    Session *s = userdata;
    tune_procs_on_proc_lost(&s->procs, trial, machine, pgid, mark, cause);
}

int session_open(Session *s, const SessionSpec *spec, Error *err)
{
    s->spec = *spec;
    if (open_cluster(s, spec, err) < 0)
        return -1;
    /* Slurm's nodes are reached through Slurm, never by SSH to each. */
    int keep = !s->sim && !s->slurm &&
               (spec->keep_hosts == SESSION_KEEP_ALL || (spec->keep_hosts && !s->job));
    if (keep && open_pool(s, spec, err) < 0)
        return -1;
    if (!s->job)
        return 0;
    const LauncherKind *lk = choose_launcher(s, spec, err);
    if (!lk)
        return journal_setting_refused(s, "launcher", err);
    if (!s->pool && is_remote_launcher(s->launcher) && open_pool(s, spec, err) < 0)
        return -1;
    const char *login_host = NULL;
    HostPool *login = NULL;
    if (strcmp(s->launcher, "slurm") == 0) {
        if (open_slurm(s, spec, err) < 0)
            return -1;
        login = slurm_ctl_login_pool(s->slurm, &login_host);
    }
    TunerConfig cfg = {
        .cluster = s->cluster,
        .job = s->job,
        .optimizer = spec->optimizer,
        .seed = (uint64_t)spec->seed,
        .budget = spec->budget,
        .launcher = lk,
        .launch = {.command = s->trial_cmd,
                   .timeout_s = spec->trial_timeout_s,
                   .sim = s->sim,
                   .seed = (uint64_t)spec->seed,
                   .remote = login ? login : s->pool,
                   .remote_host = login ? login_host : NULL,
                   .slurm_job = s->alloc.job_id,
                   .slurm_het = s->alloc.het,
                   .on_log = session_trial_log_line,
                   .on_proc = on_proc,
                   .on_proc_lost = on_proc_lost,
                   .userdata = s,
                   .on_steps_left = login_steps_add,
                   .steps_userdata = &s->login_steps},
        .async_suggest = spec->async_suggest,
        .no_prune = spec->no_prune,
        .stop_when_converged = spec->stop_when_converged,
        .on_event = on_event,
        .before_launch = session_before_launch,
        .machine_usable = session_machine_usable,
        .usable_is_launch_host = strcmp(s->launcher, "single") == 0,
        .may_begin = session_recheck_may_begin,
        .userdata = s,
    };
    if (!(s->tuner = tuner_new(&cfg, err)))
        return s->resume ? journal_setting_refused(s, "optimizer", err)
                         : error_prefix(err, "--optimizer");
    return 0;
}

int session_journal_begin(Session *s, Error *err)
{
    if (!s->with_journal || !s->tuner)
        return 0;
    int rc;
    if (s->resume) {
        /* before the resume's lines, which say it, and its own raise for an unstarted
         * override, which adds to it */
        tuner_restore_budget_raised(s->tuner, (int)s->resumed.budget_raised);
        rc = tune_journal_resume(s->journal, s->tuner, s->cluster, s->resume_budget_set, err);
        if (rc == 0 && !s->pool) /* no interrupted group to stop (session_stop_interrupted) */
            tune_journal_release_events(s->journal);
    } else {
        TuneSetup setup;
        memset(&setup, 0, sizeof setup);
        snprintf(setup.sim, sizeof setup.sim, "%s", s->sim ? s->spec.sim : "");
        snprintf(setup.optimizer, sizeof setup.optimizer, "%s", tuner_optimizer_name(s->tuner));
        snprintf(setup.launcher, sizeof setup.launcher, "%s", s->launcher);
        snprintf(setup.trial_cmd, sizeof setup.trial_cmd, "%s", s->trial_cmd ? s->trial_cmd : "");
        setup.seed = s->spec.seed;
        setup.budget = s->spec.budget;
        setup.timeout_s = s->spec.trial_timeout_s;
        setup.no_prune = s->spec.no_prune;
        setup.stop_when_converged = s->spec.stop_when_converged;
        setup.cluster = s->sim ? NULL : cluster_to_json(s->cluster);
        setup.job = s->sim ? NULL : job_to_json(s->job);
        rc = tune_journal_start(s->journal, s->tuner, &setup, err);
        tune_setup_clear(&setup);
    }
    s->journal_open = rc == 0;
    if (s->journal_open) {
        /* what the resume released, then the allocation this run holds: a run that cannot
         * release it at its end leaves its id and name for the next resume */
        for (size_t i = 0; i < s->n_left; i++)
            if (s->left_result[i][0])
                tune_journal_append(s->journal,
                                    tune_alloc_released_json(s->left[i].job, s->left_result[i]));
        if (s->slurm && s->alloc.owned)
            tune_journal_append(s->journal, tune_alloc_json(s->alloc.job_id, s->alloc.name,
                                                            slurm_ctl_where(s->slurm)));
    }
    /* the hosts the journal last left out, refused then: checked before the first new trial */
    if (s->journal_open)
        session_recheck_begin(s);
    /* Beside the journal, whose lock keeps it this session's alone; made at a first line. */
    if (s->journal_open && !(s->trial_log = triallog_new(tune_journal_path(s->journal))))
        return error_no_memory(err, "trial log");
    return rc;
}

void session_journal_end(Session *s)
{
    /* A stop still under way (its caller's loop ended on an error) journals its results
     * first: nothing may follow the journal's `ended` line (but the Slurm allocation's
     * release, at session_close: readers pass over it). Its report callback still runs
     * while the caller's screen is up. */
    session_stop_wait(s);
    if (s->journal_open)
        tune_journal_end(s->journal, s->tuner);
}

void session_interrupt(Session *s, const char *why)
{
    if (!s->tuner)
        return;
    tuner_halt(s->tuner);
    char outcome[ERROR_MSG_MAX + 32];
    snprintf(outcome, sizeof outcome, "interrupted: %s", why);
    session_trial_log_end(s, s->log_trial, outcome);
}

void session_close(Session *s)
{
    if (!s)
        return;
    /* A stop still under way (its caller's loop is gone) is waited for here, so its results
     * reach the journal before its hosts' connections close. */
    session_stop_wait(s);
    s->verdict_ready = 0;
    int had_tuner = s->tuner != NULL;
    tuner_free(s->tuner); /* before the pool its runs use */
    s->tuner = NULL;
    login_steps_clear(&s->login_steps); /* its scancel too: before the login node's pool */
    if (had_tuner) /* a trial that ran at the close (the console's quit): what it printed */
        session_trial_log_end(s, s->log_trial, "stopped: the session closed while it ran");
    hostpool_free(s->pool);
    s->pool = NULL;
    if (s->slurm) {
        /* after the `ended` line, the one line that may: the tuner's last step (a trial the
         * console's quit stopped) ran in the allocation until tuner_free */
        char job[sizeof s->alloc.job_id];
        snprintf(job, sizeof job, "%s", s->alloc.owned ? s->alloc.job_id : "");
        Error why;
        const char *where = slurm_ctl_where(s->slurm);
        ReleaseWait w = {.wait_s = s->release_wait_s,
                         .interrupted = s->spec.close_interrupted,
                         .report = s->spec.on_close_report ? s->spec.on_close_report
                                                           : s->spec.on_report,
                         .userdata = s->spec.report_userdata};
        if (release_wait_close(s->slurm, &s->alloc, &w, &why) < 0)
            snprintf(s->alloc_left, sizeof s->alloc_left, "%s%s%s%s%s%s", why.msg,
                     s->journal_open ? " (or `tunedeck tune --resume " : "",
                     s->journal_open ? tune_journal_id(s->journal) : "",
                     s->journal_open ? "`, which releases it first, once " : "",
                     s->journal_open ? (strcmp(where, "here") ? where : "the controller") : "",
                     s->journal_open ? " answers)" : "");
        else if (job[0] && s->journal_open)
            tune_journal_append(s->journal, tune_alloc_released_json(job, "released"));
    }
    slurm_ctl_free(s->slurm);
    s->slurm = NULL;
    simcluster_free(s->sim);
    s->sim = NULL;
    cluster_free(s->owned_cluster);
    s->owned_cluster = NULL;
    job_clear(&s->owned_job);
    s->cluster = NULL;
    s->job = NULL;
    orphans_clear(&s->procs.seen);
    orphans_clear(&s->procs.lost);
    free(s->refused_said);
    s->refused_said = NULL;
    free(s->recheck);
    s->recheck = NULL;
    free(s->recheck_attempts);
    s->recheck_attempts = NULL;
    s->recheck_decided = 0;
}

const char *session_alloc_left(const Session *s)
{
    return s && s->alloc_left[0] ? s->alloc_left : NULL;
}

void session_free(Session *s)
{
    if (!s)
        return;
    session_close(s);
    triallog_free(s->trial_log);
    tune_journal_free(s->journal);
    tune_setup_clear(&s->resumed);
    free(s);
}
