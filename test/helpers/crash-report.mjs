// Loaded into every Node process the tests start (NODE_OPTIONS=--import, set by test/helpers/fixtures.ts): installs
// test/native/crash_report.c's fault handler, so a process that dies of SIGSEGV & co. prints its native stack.
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const lib = process.env.JETPROF_TEST_CRASH_LIB;
if (lib && isMainThread) {
  const koffi = createRequire(import.meta.url)('koffi');
  const loaded = koffi.load(lib);
  loaded.func('void crash_report_install(void)')();
  // koffi unloads a library once nothing refers to it: the handler's code must stay mapped for the process's life
  globalThis.__jetprofCrashReport = loaded;
}
