import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import ModelPicker from './ModelPicker.svelte';

// What a person sees after "List models" against an endpoint with hundreds of models.
const many = Array.from({ length: 250 }, (_, i) => `vendor/model-${i + 1}`);

function options(body: string): string[] {
  return [...body.matchAll(/data-testid="main-model-option"[^>]*>([^<]*)</g)].map((m) => m[1] ?? '');
}

describe('ModelPicker', () => {
  it('shows a capped list and says how many more there are', () => {
    const { body } = render(ModelPicker, { props: { slot: 'main', models: many, value: 'vendor/model-2' } });
    expect(options(body)).toHaveLength(30);
    expect(body).toContain('220 more — type to filter');
    expect(body).toContain('placeholder="Filter 250 models"');
    // The picked model is marked, and is the list's one tab stop.
    expect(body).toMatch(/aria-selected="true"[^>]*tabindex="0"[^>]*>vendor\/model-2</);
  });

  it('lists everything without a "more" line when few models come back', () => {
    const { body } = render(ModelPicker, { props: { slot: 'light', models: ['a', 'b'], value: '' } });
    expect(body).not.toContain('more — type to filter');
    expect([...body.matchAll(/data-testid="light-model-option"/g)]).toHaveLength(2);
  });

  it('offers a model listed twice once (a duplicate key would stop the whole UI from updating)', () => {
    const { body } = render(ModelPicker, { props: { slot: 'main', models: ['gpt-4o', 'mini', 'gpt-4o'], value: '' } });
    expect(options(body)).toEqual(['gpt-4o', 'mini']);
    expect(body).toContain('placeholder="Filter 2 models"');
  });
});

describe('ModelPicker details', () => {
  it('shows what the endpoint reports about a model beside its id', () => {
    const details = {
      'qwen2.5-coder:7b': { id: 'qwen2.5-coder:7b', context_window: 32_768, input_price_per_mtok: null, output_price_per_mtok: null },
      'anthropic/claude-sonnet-4.5': { id: 'anthropic/claude-sonnet-4.5', context_window: 1_000_000, input_price_per_mtok: 3, output_price_per_mtok: 15 },
    };
    const { body } = render(ModelPicker, { props: { slot: 'main', models: ['qwen2.5-coder:7b', 'anthropic/claude-sonnet-4.5', 'plain'], value: '', details } });
    const abouts = [...body.matchAll(/data-testid="main-model-about">([^<]*)</g)].map((m) => m[1]);
    expect(abouts).toHaveLength(2);
    expect(abouts[0]).toBe('33k ctx');
    expect(abouts[1]).toMatch(/ctx · \$3\/\$15 per 1M$/);
    expect(options(body)).toEqual(['qwen2.5-coder:7b', 'anthropic/claude-sonnet-4.5', 'plain']);
  });
});
