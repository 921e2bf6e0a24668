/**
 * The Node implementations of the platform services the engine runs on (file system, path, child processes,
 * terminal) and the Node stream adapter the Bash tool reads output with, from `@effect/platform-node`.
 *
 * The published library does not depend on `@effect/platform-node`: its peers (cluster, rpc, sql, workflow) and
 * dependencies (undici, ws, @parcel/watcher) were most of an installation's weight, for five small modules. The
 * library build (scripts/build.mjs) bundles the modules this file imports into dist/layers/platform/NodePlatform.js
 * (`effect` and `@effect/platform` stay the application's). The types here name only `@effect/platform` services,
 * so the declarations need nothing else either.
 */
import type { Readable } from "node:stream"
import type { CommandExecutor, FileSystem, Path, Terminal } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Layer, type Stream } from "effect"

/** What `layer` provides: the file system, paths, child processes and the terminal. */
export type NodePlatform = CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path | Terminal.Terminal

/** Node's file system, path, command executor and terminal (`NodeContext.layer` without the worker manager). */
export const layer: Layer.Layer<NodePlatform> = Layer.mergeAll(
  NodePath.layer,
  NodeCommandExecutor.layer,
  NodeTerminal.layer
).pipe(Layer.provideMerge(NodeFileSystem.layer))

/** A Node readable as a Stream of its chunks; interrupting the stream destroys the readable. */
export const fromReadable = <E, A = Uint8Array>(
  evaluate: () => Readable | NodeJS.ReadableStream,
  onError: (error: unknown) => E
): Stream.Stream<A, E> => NodeStream.fromReadable<E, A>(evaluate, onError)
