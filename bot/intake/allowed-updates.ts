/**
 * The update types docket asks Telegram for (Bot API: getUpdates / setWebhook `allowed_updates`):
 * new messages (files, commands), edited messages (a file replaced in an existing message is a new
 * file) and button presses. Polling and the webhook use the same list.
 */
export const ALLOWED_UPDATES = ["message", "edited_message", "callback_query"] as const;
