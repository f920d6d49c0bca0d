/* The ssh configuration every unit test that makes a host pool names, so that none reads the
 * developer's own: /dev/null, which tunedeck takes as an empty configuration. Given a file by
 * name, libssh reads that file alone (not ~/.ssh/config, not /etc/ssh/ssh_config), and so
 * does the trust check before it (hostpool_configs_trusted), so an odd ~/.ssh or machine
 * configuration cannot fail an unrelated test. */
#ifndef TUNEDECK_TEST_SSH_HERMETIC_H
#define TUNEDECK_TEST_SSH_HERMETIC_H

#define TEST_SSH_CONFIG "/dev/null"

#endif
