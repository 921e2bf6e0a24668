/**
 * The places where bash evaluates text as code although nothing there looks like a command: arithmetic, array
 * subscripts, `[[ … -eq … ]]`, `-v` tests, `${x@P}` and the other expansions that assign, transform or follow a
 * name. In arithmetic a variable's value is itself evaluated, and `a[$(cmd)]` in it runs cmd:
 * `x='a[$(touch /tmp/p)]'; : $((x))` creates the file. Such a construct is never read-only, however inert the
 * command around it: only constant arithmetic (`$((1 + 2))`, `${a[0]}`, `${x:1:2}`) passes.
 */
import type { Node } from "web-tree-sitter"
import { childrenOf } from "./ShellWords.js"

/** Arithmetic node types that only combine their operands. */
const composite = new Set(["binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression"])

/** True when a node of an arithmetic context is a constant: numbers combined by operators, nothing named. */
const isConstant = (node: Node): boolean => {
  if (node.type === "number") return true
  if (node.type === "word") return /^\d+$/.test(node.text)
  return composite.has(node.type) && childrenOf(node).every((child) => !child.isNamed || isConstant(child))
}

/** The named parts of an arithmetic context (the expressions between `((` and `))`, not a loop's body). */
const arithmeticParts = (node: Node): ReadonlyArray<Node> =>
  childrenOf(node).filter((child) => child.isNamed && child.type !== "do_group" && child.type !== "comment")

const arithmeticOperators = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])

/** `[[ … ]]` and `[ … ]`: `-v`/`-R` evaluate a subscript; in `[[` arithmetic comparisons evaluate both sides. */
const testDanger = (node: Node): string | undefined => {
  const double = node.firstChild?.type === "[["
  const walk = (current: Node): string | undefined => {
    if (current.type === "test_operator" && (current.text === "-v" || current.text === "-R"))
      return `test ${current.text} evaluates array subscripts`
    if (current.type === "binary_expression") {
      const operator = current.childForFieldName("operator")
      if (double && operator !== null && arithmeticOperators.has(operator.text)) {
        const sides = [current.childForFieldName("left"), current.childForFieldName("right")]
        if (sides.some((side) => side === null || !isConstant(side)))
          return `[[ ${operator.text} ]] evaluates its operands as arithmetic`
      }
    }
    for (const child of childrenOf(current)) {
      const found = walk(child)
      if (found !== undefined) return found
    }
    return undefined
  }
  return walk(node)
}

/** `${…}`: indirection, transformations, assignments and substring offsets that are not constant. */
const expansionDanger = (node: Node): string | undefined => {
  const children = childrenOf(node)
  const operators = children.filter((child) => !child.isNamed)
  const first = children.find((child) => child.type !== "${")
  if (first?.type === "!") return "indirect expansion (! before the name)"
  if (operators.some((operator) => operator.type === "@")) return "parameter transformation (@ operator)"
  if (operators.some((operator) => operator.type === "=" || operator.type === ":="))
    return "assignment inside an expansion (= or :=)"
  const colon = children.findIndex((child) => child.type === ":")
  if (colon !== -1) {
    const offsets = children.slice(colon + 1).filter((child) => child.isNamed)
    if (offsets.some((offset) => !isConstant(offset))) return "substring offset evaluated as arithmetic"
  }
  return undefined
}

/** Why this node makes bash evaluate text as code, or undefined. Called on every node of the tree. */
export const evaluationDanger = (node: Node): string | undefined => {
  switch (node.type) {
    case "arithmetic_expansion":
    case "c_style_for_statement":
      return arithmeticParts(node).every(isConstant) ? undefined : "arithmetic on a variable"
    case "compound_statement":
      return node.firstChild?.type === "((" && !arithmeticParts(node).every(isConstant)
        ? "arithmetic on a variable"
        : undefined
    case "subscript": {
      const index = node.childForFieldName("index")
      const whole = index !== null && (index.text === "@" || index.text === "*")
      return index === null || whole || isConstant(index) ? undefined : "array subscript evaluated as arithmetic"
    }
    case "expansion":
      return expansionDanger(node)
    case "test_command":
      return testDanger(node)
    default:
      return undefined
  }
}

/** `test -v NAME` / `[ -v NAME ]` as plain commands: the name's subscript is evaluated. */
export const testCommandDanger = (argv: ReadonlyArray<{ readonly value: string; readonly literal: boolean }>) => {
  const name = argv[0]
  if (name === undefined || !name.literal || (name.value !== "test" && name.value !== "[")) return undefined
  const flag = argv.slice(1).find((word) => word.literal && (word.value === "-v" || word.value === "-R"))
  return flag === undefined ? undefined : `test ${flag.value} evaluates array subscripts`
}
