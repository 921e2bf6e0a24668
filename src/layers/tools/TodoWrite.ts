/**
 * TodoWrite: the model's task list for the session, kept in session state (docs/tools.md).
 */
import { Effect, Schema } from "effect"
import { ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** One task of the list. */
export const Todo = Schema.Struct({
  content: Schema.String.annotations({
    description: 'The task in the imperative, as shown when it is pending or done, e.g. "Run the tests".'
  }),
  status: Schema.Literal("pending", "in_progress", "completed").annotations({
    description: "pending: not started; in_progress: being worked on now (at most one task); completed: done."
  }),
  activeForm: Schema.String.annotations({
    description: 'The task in the present continuous, shown while it is in progress, e.g. "Running the tests".'
  })
})
export type Todo = typeof Todo.Type

const Input = Schema.Struct({
  todos: Schema.Array(Todo).annotations({
    description: "The complete, updated task list. It replaces the previous list entirely."
  })
})

/** The output: the list before and after the update. */
const Output = Schema.Struct({
  oldTodos: Schema.Array(Todo),
  newTodos: Schema.Array(Todo)
})
type Output = typeof Output.Type

/** The session's current task list. */
export const todosKey = Tool.stateKey<ReadonlyArray<Todo>>("armature/todos", [])

/** The resource every TodoWrite call writes, so a result cache only forgets what depends on the list. */
const todosResource: Tool.Resource = { key: "session:todos", access: "write" }

const description = `Creates and updates the task list of the current session.

Use it to plan multi-step work, to track progress, and to show the user what you are doing.

When to use it:
- A task needs three or more distinct steps, or careful planning.
- The user gives several things to do (a numbered list, comma-separated requests) or asks for a todo list.
- New requirements appear while you work: add them as tasks.
- When you start a task, mark it in_progress BEFORE beginning; when you finish it, mark it completed at once
  rather than batching several completions later.

When not to use it: a single trivial step, a purely conversational or informational answer, or work you can
finish in one or two obvious actions. Tracking those only adds noise.

Parameters:
- todos: the whole list, every time (it replaces the previous one). Each task has:
  - content: what to do, in the imperative ("Fix the login redirect"); must not be empty.
  - activeForm: the same task in the present continuous ("Fixing the login redirect"), shown while it runs.
  - status: "pending", "in_progress" or "completed".

Rules: exactly one task should be in_progress while you are working, and never more than one (the same rule as
Claude Code's todo list); a call with two or more in_progress tasks is rejected. Only mark a task completed when
it is fully done: tests pass, nothing is left unfinished; if you are blocked, keep it in_progress and add a task
for what blocks you. Remove tasks that no longer matter.

Result: a confirmation with the updated list, one task per line: [x] completed, [~] in progress (shown with
its activeForm), [ ] pending.

Misuse: sending only the changed tasks (the others are lost), marking several tasks in_progress at once, or
marking a task completed when its tests fail.`

const marker = (todo: Todo): string =>
  todo.status === "completed"
    ? `[x] ${todo.content}`
    : todo.status === "in_progress"
      ? `[~] ${todo.activeForm}`
      : `[ ] ${todo.content}`

/** The result text for an updated list. */
export const render = (todos: ReadonlyArray<Todo>): string => {
  if (todos.length === 0) return "Todo list cleared: there are no tasks."
  const count = (status: Todo["status"]) => todos.filter((t) => t.status === status).length
  const header = `Todo list updated (${todos.length} ${todos.length === 1 ? "task" : "tasks"}: ${count("completed")} completed, ${count("in_progress")} in progress, ${count("pending")} pending):`
  return `${header}\n${todos.map(marker).join("\n")}\n\nKeep the list current: mark a task in_progress before you start it and completed as soon as it is done.`
}

/** Rejects lists with empty tasks or with more than one task in progress. */
export const check = (todos: ReadonlyArray<Todo>): Effect.Effect<void, ToolValidationError> => {
  const empty = todos.findIndex((t) => t.content.trim().length === 0)
  if (empty >= 0) return Effect.fail(new ToolValidationError({ message: `Todo ${empty + 1} has empty content` }))
  const blankForm = todos.findIndex((t) => t.activeForm.trim().length === 0)
  if (blankForm >= 0) {
    return Effect.fail(new ToolValidationError({ message: `Todo ${blankForm + 1} has an empty activeForm` }))
  }
  const active = todos.filter((t) => t.status === "in_progress")
  if (active.length > 1) {
    return Effect.fail(
      new ToolValidationError({
        message: `Only one todo may be in_progress at a time; ${active.length} are: ${active.map((t) => JSON.stringify(t.content)).join(", ")}`
      })
    )
  }
  return Effect.void
}

/** Makes the TodoWrite tool. */
export const make = Tool.make({
  name: "TodoWrite",
  description,
  input: Input,
  output: Output,
  category: "plan",
  searchHint: "todo task list plan progress track checklist",
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  validate: (input) => check(input.todos),
  checkPermissions: () =>
    Effect.succeed({ behavior: "allow", reason: "TodoWrite only changes the session's task list" } as const),
  resources: () => [todosResource],
  summarize: (input) => `${input.todos.length} ${input.todos.length === 1 ? "todo" : "todos"}`,
  call: (input, ctx) =>
    ctx.state.modify(todosKey, (old): readonly [Output, ReadonlyArray<Todo>] => [
      { oldTodos: old, newTodos: input.todos },
      input.todos
    ]),
  toResult: (output) => render(output.newTodos)
})

/** Registers TodoWrite. Needs only the ToolRegistry. */
export const layer = ToolRegistryLive.register(make)
