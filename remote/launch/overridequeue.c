/* The operator's overrides waiting to run (overridequeue.h). */
#include <string.h>

#include "remote/launch/overridequeue.h"

int overridequeue_push(OverrideQueue *q, int id, const Schedule *s, Error *err)
{
    if (schedule_validate(s, err) < 0)
        return -1;
    if (q->n >= OVERRIDEQUEUE_MAX)
        return error_set(err,
                         "the override queue is full (%d wait to run): drop one or let "
                         "them run first",
                         OVERRIDEQUEUE_MAX);
    Schedule *copy = schedule_copy(s);
    if (!copy)
        return error_set(err, "override: out of memory");
    q->s[q->n] = copy;
    q->id[q->n] = id;
    q->n++;
    if (id > q->last_id)
        q->last_id = id;
    return 0;
}

Schedule *overridequeue_take(OverrideQueue *q, size_t i, int *id)
{
    if (i >= q->n)
        return NULL;
    Schedule *s = q->s[i];
    *id = q->id[i];
    q->n--;
    memmove(q->s + i, q->s + i + 1, (q->n - i) * sizeof q->s[0]);
    memmove(q->id + i, q->id + i + 1, (q->n - i) * sizeof q->id[0]);
    return s;
}

void overridequeue_clear(OverrideQueue *q)
{
    for (size_t i = 0; i < q->n; i++)
        schedule_free(q->s[i]);
    q->n = 0;
}
