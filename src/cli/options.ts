/** Option parsers shared by the commands: each throws a one-line error that names the option. */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';

/** A jetprof command or program, as commander runs it. */
export type Program = Command;

/**
 * A command declared with @commander-js/extra-typings, so its action's options are typed from its declaration (a
 * renamed flag is a compile error where it is read), handed on as commander's Command: one class at run time.
 */
export const asCommand = (declared: object): Program => declared as Program;

export function parseIntInRange(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value))
      throw new InvalidArgumentError(`${name} must be an integer between ${min} and ${max}, got '${value}'`);
    const n = Number(value);
    if (n < min || n > max)
      throw new InvalidArgumentError(`${name} must be an integer between ${min} and ${max}, got ${n}`);
    return n;
  };
}

/**
 * A camera's frame rate (--source-fps of infer and capacity): from one frame in 10 s to 1000 FPS. Below the floor a
 * paced run would wait minutes for its next frame (0.001 FPS: 1000 s between frames).
 */
const SOURCE_FPS_RANGE = { min: 0.1, max: 1000 } as const;

export function parseSourceFps(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!(n >= SOURCE_FPS_RANGE.min && n <= SOURCE_FPS_RANGE.max))
      throw new InvalidArgumentError(
        `${name} must be a frame rate from ${SOURCE_FPS_RANGE.min} (one frame in 10 s) to ${SOURCE_FPS_RANGE.max}, got '${v}'`,
      );
    return n;
  };
}

export function parseFraction(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
      throw new InvalidArgumentError(`${name} must be a number between 0 and 1, got '${value}'`);
    return n;
  };
}

/** A percentage from 0 to 100 ('1', '0.5', '2%'). */
export function parsePercent(name: string) {
  return (value: string): number => {
    const v = value.trim().replace(/%$/, '');
    const n = Number(v);
    if (v === '' || !Number.isFinite(n) || n < 0 || n > 100)
      throw new InvalidArgumentError(`${name} must be a percentage from 0 to 100, got '${value}'`);
    return n;
  };
}

/** 'WxH' -> [W, H]; both integers in [min, max] (a 100000x100000 frame would ask for 30 GB). */
export function parseSize(name: string, min = 1, max = 16384) {
  return (value: string): [number, number] => {
    const m = /^(\d+)x(\d+)$/i.exec(value.trim());
    if (!m || Number(m[1]) === 0 || Number(m[2]) === 0)
      throw new InvalidArgumentError(`${name} must look like WIDTHxHEIGHT (e.g. 960x540), got '${value}'`);
    const [w, h] = [Number(m[1]), Number(m[2])];
    if (w < min || h < min || w > max || h > max)
      throw new InvalidArgumentError(`${name} must be between ${min}x${min} and ${max}x${max}, got ${w}x${h}`);
    return [w, h];
  };
}

/** For repeatable options (`--plugin a --plugin b`): collects every value, in order (default []). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
