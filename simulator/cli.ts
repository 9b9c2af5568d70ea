import { parseArgs } from 'node:util';
import {
  PlatformSimulator,
  VALID_TOKEN,
  simulateMessage,
  simulateStatus,
  simulateTemplateEvent,
  type WebhookTarget,
} from './platform-simulator.js';
import { describeEvent, EventReceiver, signatureValid } from './event-receiver.js';

const USAGE = `Platform simulator

  npm run simulator [-- --port 4010]
      Serves the platform calls the service makes on 127.0.0.1 and logs each one.
      Point the service at it: PLATFORM_API_URL=http://127.0.0.1:4010
      Its wamids and media ids carry a part of their own per start: they never repeat.

  npm run simulate -- receive [--port 4020] [--secret whsec_…]
      A client system's end of event forwarding: receives the events the service POSTs
      (subscribe http://127.0.0.1:4020/events with POST /admin/event-subscriptions) and
      prints each, with its signature checked when --secret is the subscription's secret.

  npm run simulate -- message --from 5511999990000 --text "hi" [--name Ana] [--user-id BR.1A2B]
  npm run simulate -- message --user-id BR.1A2B --username ana.s --text "hi"
      (no --from: a user who hides the number behind a username)
      Prints the wamid it gave the message on stdout (what happened goes to stderr),
      so a script can take it: WAMID=$(npm run simulate --silent -- message …)
  npm run simulate -- status --id wamid.X --status delivered --to 5511999990000|--user-id BR.1A2B
  npm run simulate -- template --event APPROVED --template-id 594425479261596 --template-name order_update
      Delivers one correctly signed webhook to the service; exits 1 unless it answers 200.
      --service URL          the service, default http://127.0.0.1:3000 (its webhook,
                             /webhooks/messenger, is added when URL has no path)
      --secret SECRET        default $PLATFORM_APP_SECRET, else the service's development fallback
      --phone-number-id ID   default 106540352242922 (the instance's phone_number_id)
`;

/** The service's development fallback for PLATFORM_APP_SECRET (see src/config/load-config.ts). */
const DEV_APP_SECRET = 'dev-app-secret-change-me';

/** The service's webhook: `service` itself when it names a path, else its /webhooks/messenger. */
function webhookUrl(service: string): string {
  const url = new URL(service);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/webhooks/messenger';
  return url.toString();
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      service: { type: 'string', default: 'http://127.0.0.1:3000' },
      secret: { type: 'string' },
      'phone-number-id': { type: 'string', default: '106540352242922' },
      from: { type: 'string' },
      text: { type: 'string' },
      name: { type: 'string' },
      'user-id': { type: 'string' },
      username: { type: 'string' },
      id: { type: 'string' },
      status: { type: 'string' },
      to: { type: 'string' },
      event: { type: 'string' },
      'template-id': { type: 'string' },
      'template-name': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const command = positionals[0] ?? 'serve';
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (command === 'receive') {
    const receiver = await EventReceiver.start({
      port: Number(values.port ?? 4020),
      record: false,
    });
    const secret = values.secret;
    receiver.onEvent = (received) => {
      const signature = secret
        ? signatureValid(secret, received)
          ? 'signature valid'
          : 'SIGNATURE INVALID'
        : 'signature not checked (no --secret)';
      process.stdout.write(
        `${received.event.type} ${received.event.id} (${signature}) ${describeEvent(received)}\n`,
      );
    };
    process.stdout.write(`event receiver on ${receiver.url}\n`);
    return;
  }
  if (command === 'serve') {
    const simulator = await PlatformSimulator.start(Number(values.port ?? 4010));
    simulator.onRequest = (request) =>
      process.stdout.write(
        `${request.method} ${request.path} ${request.body ? JSON.stringify(request.body).slice(0, 300) : ''}\n`,
      );
    process.stdout.write(
      `platform simulator on ${simulator.url}\naccess token it accepts: ${VALID_TOKEN}\n`,
    );
    return;
  }
  const target: WebhookTarget = {
    url: webhookUrl(values.service),
    appSecret: values.secret ?? process.env.PLATFORM_APP_SECRET?.split(',')[0] ?? DEV_APP_SECRET,
    phoneNumberId: values['phone-number-id'],
  };
  let status: number;
  let wamid: string | undefined;
  const user = {
    waId: values.from ?? values.to,
    userId: values['user-id'],
    username: values.username,
    name: values.name,
  };
  if (command === 'message' && (user.waId || user.userId) && values.text) {
    const sent = await simulateMessage(target, user, values.text);
    process.stderr.write(`message ${sent.wamid} from ${user.waId ?? user.userId}: `);
    status = sent.status;
    if (status === 200) wamid = sent.wamid;
  } else if (command === 'status' && values.id && values.status && (user.waId || user.userId)) {
    status = await simulateStatus(target, values.id, values.status as 'delivered', user);
  } else if (
    command === 'template' &&
    values.event &&
    values['template-id'] &&
    values['template-name']
  ) {
    status = await simulateTemplateEvent(
      target,
      values.event,
      values['template-id'],
      values['template-name'],
    );
  } else {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  process.stderr.write(`delivered, the service answered HTTP ${status}\n`);
  if (status !== 200) process.exit(1);
  if (wamid) process.stdout.write(`${wamid}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
