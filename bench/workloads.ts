// Chain texts shared by benchmarks (and usable by tests): generated, so their size is a parameter.

/** A chain of `n` steps mixing references, templates, parallel steps and retry policies. */
export function longChainYaml(n: number): string {
  let s = 'name: long_chain\ninputs:\n  seed: string\nsteps:\n';
  for (let i = 0; i < n; i++) {
    s += `  - name: s${i}\n    tool: echo\n    input_map:\n      a: ${i ? `$.s${i - 1}.a` : '$.seed'}\n      b: "{{ $.seed }}-${i}"\n`;
    if (i % 3 === 0) s += '    parallel: true\n';
    if (i % 5 === 0) s += '    retry: { max_attempts: 3, backoff: { initial: 100ms } }\n';
    if (i % 7 === 0 && i > 0) s += `    when: $.s${i - 1}.a != 'stop'\n`;
  }
  return `${s}outputs:\n  last: $.s${n - 1}.a\n`;
}
