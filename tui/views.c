/* The views, in tab order (ViewId): the tab bar, the number keys and the mouse find them
 * here. */
#include "tui/view.h"

extern const View VIEW_TUNE_TABLE, VIEW_CLUSTER_TABLE, VIEW_HOSTS_TABLE;

static const View *const VIEWS[VIEW_COUNT] = {
    [VIEW_TUNE] = &VIEW_TUNE_TABLE,
    [VIEW_CLUSTER] = &VIEW_CLUSTER_TABLE,
    [VIEW_HOSTS] = &VIEW_HOSTS_TABLE,
};

const View *view_get(ViewId id)
{
    return VIEWS[id < VIEW_COUNT ? id : VIEW_TUNE];
}
