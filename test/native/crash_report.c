/*
 * crash_report.c - a Node addon loaded into every Node process the tests start (test/helpers/crash-report.mjs, through
 * NODE_OPTIONS=--import, loads it with process.dlopen, which never unloads it), so that a process that dies of a fault
 * says where: on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT it writes the signal, the faulting address, the thread and
 * the native stack to stderr, then dies of the same signal as it would have. Installed from inside Node, after Node
 * has reset every signal's disposition at start-up (a handler preloaded with LD_PRELOAD would not survive that). It
 * takes the place of Node's WebAssembly trap handler in those processes: no test relies on a WebAssembly out-of-bounds
 * trap (which would then end the process instead of throwing). Only async-signal-safe calls once the fault happened
 * (backtrace() is primed at install time, so that its first call does not load libgcc in the handler). Built by the
 * tests: gcc -shared -fPIC -O2 -I<node's include/node> crash_report.c.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <node_api.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void put(const char *s) {
  ssize_t ignored = write(STDERR_FILENO, s, strlen(s));
  (void)ignored;
}

static void put_hex(unsigned long v) {
  char buf[19] = "0x";
  int n = 2;
  for (int shift = 60; shift >= 0; shift -= 4) {
    int d = (int)((v >> shift) & 0xf);
    if (n > 2 || d || shift == 0) buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
  }
  buf[n] = 0;
  put(buf);
}

static void put_dec(long v) {
  char buf[24];
  int n = (int)sizeof buf - 1;
  buf[n] = 0;
  do buf[--n] = (char)('0' + v % 10);
  while ((v /= 10) > 0 && n > 0);
  put(buf + n);
}

/* The signal's name: sigabbrev_np is glibc 2.32+ (Debian 11, the JetPack 4 image's base, has 2.31). */
static const char *signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SEGV";
    case SIGBUS: return "BUS";
    case SIGILL: return "ILL";
    case SIGFPE: return "FPE";
    case SIGABRT: return "ABRT";
    default: return "signal";
  }
}

static void on_fault(int sig, siginfo_t *info, void *ucontext) {
  (void)ucontext;
  void *frames[64];
  put("\n[crash report] ");
  put(signal_name(sig));
  put(" at address ");
  put_hex((unsigned long)info->si_addr);
  put(" in thread ");
  put_dec((long)syscall(SYS_gettid));
  put(" of process ");
  put_dec((long)getpid());
  put("; native stack:\n");
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  put("[crash report] end\n");
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install(void) {
  void *prime[1];
  backtrace(prime, 1);
  static char alt[64 * 1024];
  stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

static napi_value init(napi_env env, napi_value exports) {
  (void)env;
  install();
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
